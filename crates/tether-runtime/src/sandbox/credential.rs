//! Whether a configuration file holds a credential: a token, a password, an auth string, or a
//! URL with a password in it. The sandbox reads a toolchain's configuration only when it holds
//! none (`~/.cargo/config.toml` with a registry token, a Node prefix's `etc/npmrc` with an
//! `_authToken`, a Python's `pip.conf` with an index password).
//!
//! It reads lines of the shape configuration files share (TOML, INI, npmrc, YAML): `key = value`
//! or `key: value`, and looks at the key's last word and at URLs in the value. Unsure means yes:
//! a file too large or unreadable is taken to hold one.

use std::io::Read as _;
use std::path::Path;

/// The largest configuration file read; a larger one is taken to hold a credential.
const MAX_CONFIG: u64 = 256 * 1024;

/// Keys (their last word, lowercase) whose value is a credential.
const SECRET_KEYS: &[&str] = &[
    "token",
    "_authtoken",
    "authtoken",
    "auth_token",
    "_auth",
    "_password",
    "password",
    "passwd",
    "secret",
    "secret-key",
    "secret_key",
    "oauth_token",
    "api_key",
    "apikey",
];

/// Whether the file at `path` holds a credential (or cannot be read to tell).
pub fn in_file(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return true;
    };
    let mut bytes = Vec::new();
    if file.take(MAX_CONFIG + 1).read_to_end(&mut bytes).is_err() || bytes.len() as u64 > MAX_CONFIG
    {
        return true;
    }
    in_text(&String::from_utf8_lossy(&bytes))
}

/// Whether `text` holds a credential.
pub fn in_text(text: &str) -> bool {
    text.lines().any(line_holds)
}

fn line_holds(line: &str) -> bool {
    let line = line.trim();
    if line.is_empty() || line.starts_with(['#', ';', '[']) {
        return false;
    }
    let Some(at) = line.find(['=', ':']) else {
        return false;
    };
    // An npmrc key is a registry URL and a field: `//registry.npmjs.org/:_authToken=…`.
    let split = match line.find('=') {
        Some(eq) if line[..eq].starts_with("//") => eq,
        _ => at,
    };
    let (key, value) = (&line[..split], &line[split + 1..]);
    let key = key.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    let last = key.rsplit([':', '.', '/']).next().unwrap_or(&key);
    let secret_key = SECRET_KEYS.contains(&last) && !value.trim().is_empty();
    secret_key || url_with_password(value)
}

/// Whether `value` holds a URL with a password (`https://user:pass@host`).
fn url_with_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let authority = rest
            .split(['/', '"', '\'', ' ', '?', '#'])
            .next()
            .unwrap_or_default();
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

#[cfg(test)]
mod tests {
    use super::in_text;

    #[test]
    fn tokens_passwords_and_urls_with_passwords_are_credentials() {
        for text in [
            "[registry]\ntoken = \"cio-secret\"\n",
            "[registries.work]\ntoken = \"x\"\n",
            "//registry.npmjs.org/:_authToken=npm_secret\n",
            "_auth = dXNlcjpwYXNz\n",
            "//npm.example.com/:_password=cGFzcw==\n",
            "[pypi]\npassword = pypi-secret\n",
            "[global]\nindex-url = https://user:pass@pypi.example.com/simple\n",
            "[http]\nproxy = \"http://me:pw@proxy:3128\"\n",
            "github.com:\n    oauth_token: gho_secret\n",
        ] {
            assert!(in_text(text), "{text}");
        }
    }

    #[test]
    fn plain_settings_are_not() {
        for text in [
            "[build]\nrustflags = [\"-C\", \"target-cpu=native\"]\n",
            "[registry]\ncredential-provider = [\"cargo:token\"]\n",
            "[registry]\nglobal-credential-providers = [\"cargo:token\"]\n",
            "[net]\ngit-fetch-with-cli = true\n",
            "registry=https://registry.npmjs.org/\nalways-auth=false\n",
            "[global]\nindex-url = https://pypi.example.com/simple\n",
            "[source.crates-io]\nreplace-with = \"vendored\"\n# token = \"old\"\n",
            "token =\n",
        ] {
            assert!(!in_text(text), "{text}");
        }
    }
}
