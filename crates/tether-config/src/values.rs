//! Checks for the string-shaped values: URLs, email addresses, variable names.
//!
//! Each returns the sentence a user should read (without the key, which the caller adds), so the
//! same rule gives the same message whether the value came from the file or the environment.
//! No URL crate: the rules tether needs (scheme, host, port) are a few lines. The rules an
//! integration's table needs too are public ([`http_url`], [`email`], [`env_var_name`],
//! [`non_empty`]).

/// A rule for a string value: `Err` holds the sentence to show.
pub type Check = fn(&str) -> Result<(), String>;

/// A team store's URL: `postgres://` or `postgresql://`, with no password (a file is read by
/// everyone who reads the repository; the password lives in `PGPASSWORD` or `~/.pgpass`). The
/// value is never quoted back, in case it holds one.
pub(crate) fn store_url(value: &str) -> Result<(), String> {
    let expected = "must be a PostgreSQL URL such as postgres://tether@db.example:5432/tether";
    let Some((scheme, rest)) = value.split_once("://") else {
        return Err(expected.to_owned());
    };
    if !scheme.eq_ignore_ascii_case("postgres") && !scheme.eq_ignore_ascii_case("postgresql") {
        return Err(format!("{expected}; the scheme is not postgres"));
    }
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let has_password = rest[..end]
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'));
    let query_password = rest[end..]
        .split(['?', '&'])
        .any(|pair| pair.to_ascii_lowercase().starts_with("password="));
    if has_password || query_password {
        return Err(
            "must not contain a password: set PGPASSWORD, or put it in ~/.pgpass (chmod 0600)"
                .to_owned(),
        );
    }
    if rest[..end]
        .rsplit_once('@')
        .map_or(&rest[..end], |(_, host)| host)
        .is_empty()
    {
        return Err(format!("{expected}; it names no host"));
    }
    Ok(())
}

/// An `http://` or `https://` URL with a non-empty host, an optional valid port and no
/// credentials.
pub fn http_url(value: &str) -> Result<(), String> {
    let expected = "must be an http:// or https:// URL such as https://chat.example.com";
    if value.chars().any(char::is_whitespace) {
        return Err(format!("{expected}; it contains whitespace"));
    }
    let Some((scheme, rest)) = value.split_once("://") else {
        return Err(format!("{expected}, got {value:?}"));
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(format!(
            "{expected}; the scheme {scheme:?} is not http or https"
        ));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.contains('@') {
        return Err(
            "must not contain credentials (user:password@); keys never live in files".to_owned(),
        );
    }
    let (host, port) = split_host_port(authority);
    let host_ok = if let Some(inner) = host.strip_prefix('[') {
        inner
            .strip_suffix(']')
            .is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok())
    } else {
        !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    };
    if host.is_empty() {
        return Err(format!("{expected}; the host is missing in {value:?}"));
    }
    if !host_ok {
        return Err(format!("{expected}; {host:?} is not a valid host"));
    }
    if let Some(port) = port
        && port.parse::<u16>().map_or(true, |p| p == 0)
    {
        return Err(format!(
            "{expected}; the port {port:?} is not between 1 and 65535"
        ));
    }
    Ok(())
}

fn split_host_port(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        // [v6]:port
        match authority.find(']') {
            Some(close) => {
                let (host, rest) = authority.split_at(close + 1);
                (host, rest.strip_prefix(':'))
            }
            None => (authority, None),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    }
}

/// An email address: something, `@`, a domain with a dot, no whitespace.
pub fn email(value: &str) -> Result<(), String> {
    let valid = match value.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !value.chars().any(char::is_whitespace)
        }
        None => false,
    };
    if valid {
        Ok(())
    } else {
        Err(format!(
            "must be an email address such as tether-bot@chat.example.com, got {value:?}"
        ))
    }
}

/// The name of an environment variable: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn env_var_name(value: &str) -> Result<(), String> {
    let mut chars = value.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        // Do not echo the value: a user may have pasted the key itself here.
        Err(
            "must be the NAME of an environment variable (letters, digits and _, not starting \
             with a digit), such as OPENAI_API_KEY; the key itself never goes in the file"
                .to_owned(),
        )
    }
}

/// A person's name as acts are recorded under it: one line, not empty, at most 100 characters.
pub(crate) fn person_name(value: &str) -> Result<(), String> {
    let name = value.trim();
    if name.is_empty() {
        return Err(
            "must not be empty; give your name, or remove it to use git's user.name".into(),
        );
    }
    if name.chars().any(char::is_control) {
        return Err("must be one line of text, without control characters".into());
    }
    if name.chars().count() > 100 {
        return Err("is longer than 100 characters".into());
    }
    Ok(())
}

/// Any text that is not empty or only whitespace.
pub fn non_empty(value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        Err("must not be empty".to_owned())
    } else {
        Ok(())
    }
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
