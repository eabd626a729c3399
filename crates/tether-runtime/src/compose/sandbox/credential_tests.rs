use proptest::prelude::*;

use super::{Format, in_text};

#[test]
fn tokens_passwords_providers_and_urls_with_passwords_in_toml_are_credentials() {
    for text in [
        "[registry]\ntoken = \"cio-secret\"\n",
        "[registries.work]\ntoken = \"x\"\n",
        // The defect: an inline table, read before as the key `work`.
        "[registries]\nwork = { index = \"https://r.example/index\", token = \"x\" }\n",
        "registries.work.token = \"x\"\n",
        "[registries]\n\"work\".token = \"x\"\n",
        "[[patch.unused]]\nname = \"a\"\n[[patch.unused]]\npassword = \"p\"\n",
        "[a.b.c.d]\ne = { f = { g = { secret = \"s\" } } }\n",
        "[http]\nproxy = \"http://me:pw@proxy:3128\"\n",
        "[source.mine]\nregistry = \"sparse+https://u:p@r.example/index/\"\n",
        "[x]\nlist = [\"a\", { url = \"https://u:p@h\" }]\n",
        "[registry]\ncredential-provider = [\"cargo:token\"]\n",
        "[registry]\nglobal-credential-providers = [\"cargo:token\"]\n",
        "[registries.work]\ncredential-provider = \"cargo:libsecret\"\n",
        "[credential-alias]\nmine = [\"/usr/bin/my-provider\", \"--arg\"]\n",
        "[registry]\ntoken = 12\n",
        "[registry]\ntoken = { from = \"elsewhere\" }\n",
        "[registry]\nTOKEN = \"x\"\n",
        // Not TOML at all: unsure.
        "[registry\ntoken = x\n",
        "token = \"unterminated\n",
    ] {
        assert!(in_text(text, Format::Toml), "{text}");
    }
}

#[test]
fn plain_cargo_settings_are_not() {
    for text in [
        "",
        "[build]\njobs = 4\nrustflags = [\"-C\", \"target-cpu=native\"]\n",
        "[net]\ngit-fetch-with-cli = true\noffline = false\n",
        "[source.crates-io]\nreplace-with = \"vendored\"\n# token = \"old\"\n",
        "[registries.work]\nindex = \"https://r.example/index\"\n",
        "[registry]\ntoken = \"\"\n",
        "[target.x86_64-unknown-linux-gnu]\nlinker = \"clang\"\n",
        "[env]\nTOKENIZER_PATH = \"/opt/tok\"\n",
    ] {
        assert!(!in_text(text, Format::Toml), "{text}");
    }
}

#[test]
fn passwords_keyrings_and_urls_with_passwords_in_ini_are_credentials() {
    for text in [
        "[pypi]\npassword = pypi-secret\n",
        "[global]\nindex-url = https://user:pass@pypi.example.com/simple\n",
        "[global]\nindex-url: https://user:pass@pypi.example.com/simple\n",
        "[global]\nextra-index-url =\n    https://pypi.org/simple\n    https://u:p@private.example/simple\n",
        "[global]\nkeyring-provider = subprocess\n",
        "[credential]\nhelper = store\n",
        "[global]\nhttps://u:p@pypi.example.com\n",
        // Not INI: unsure.
        "[global\nindex-url = https://pypi.org/simple\n",
        "just words\n",
        "  continued before any key\n",
    ] {
        assert!(in_text(text, Format::Ini), "{text}");
    }
}

#[test]
fn plain_pip_settings_are_not() {
    for text in [
        "",
        "[global]\nindex-url = https://pypi.example.com/simple\ntimeout = 60\n",
        "; a comment\n# another\n[install]\nno-binary = :all:\n",
        "[global]\nextra-index-url =\n    https://a.example/simple\n    https://b.example/simple\n",
        "[global]\ntrusted-host = pypi.example.com\n",
    ] {
        assert!(!in_text(text, Format::Ini), "{text}");
    }
}

#[test]
fn npmrc_tokens_and_urls_with_passwords_are_credentials() {
    for text in [
        "//registry.npmjs.org/:_authToken=npm_secret\n",
        "//npm.example.com/scope/:_authToken = npm_secret\n",
        "//npm.example.com/:_password=cGFzcw==\n",
        "_auth = dXNlcjpwYXNz\n",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n",
        "registry=https://me:pw@npm.example.com/\n",
        "@scope:registry=https://me:pw@npm.example.com/\n",
        "[section]\n//h/:_authToken=x\n",
        // Not npmrc: unsure.
        "registry https://registry.npmjs.org/\n",
    ] {
        assert!(in_text(text, Format::Npmrc), "{text}");
    }
}

#[test]
fn plain_npm_settings_are_not() {
    for text in [
        "",
        "registry=https://registry.npmjs.org/\n",
        "@scope:registry=https://npm.example.com/\nalways-auth=false\n",
        "; comment\n# comment\nprefix=/opt/node\n",
        "//registry.npmjs.org/:_authToken=\n",
    ] {
        assert!(!in_text(text, Format::Npmrc), "{text}");
    }
}

/// A key that is not a credential's.
fn plain_key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "index", "name", "jobs", "work", "mirror", "url", "path",
    ])
    .prop_map(str::to_owned)
}

/// A secret as TOML can hold it: a secret key, a provider, or a URL with a password.
fn secret() -> impl Strategy<Value = (String, toml::Value)> {
    prop_oneof![
        prop::sample::select(vec!["token", "password", "_authToken", "secret", "api_key"])
            .prop_map(|k| (k.to_owned(), toml::Value::String("s3cret".into()))),
        prop::sample::select(vec!["credential-provider", "global-credential-providers"]).prop_map(
            |k| (
                k.to_owned(),
                toml::Value::Array(vec![toml::Value::String("cargo:token".into())])
            )
        ),
        plain_key().prop_map(|k| (k, toml::Value::String("https://u:p@host/x".into()))),
    ]
}

/// Where the secret sits: a chain of tables and arrays of tables around it.
#[derive(Debug, Clone)]
enum Wrap {
    Table(String),
    ArrayOfTables(String),
}

fn wrap() -> impl Strategy<Value = Wrap> {
    prop_oneof![
        plain_key().prop_map(Wrap::Table),
        plain_key().prop_map(Wrap::ArrayOfTables),
    ]
}

/// `value` under `key`, wrapped in `wraps` (innermost last), beside a plain key at each level.
fn document(wraps: &[Wrap], key: String, value: toml::Value) -> toml::Table {
    let mut inner = toml::Table::new();
    inner.insert("plain".into(), toml::Value::Integer(1));
    inner.insert(key, value);
    for wrap in wraps.iter().rev() {
        let mut outer = toml::Table::new();
        outer.insert("plain".into(), toml::Value::Boolean(true));
        match wrap {
            Wrap::Table(name) => outer.insert(name.clone(), toml::Value::Table(inner)),
            Wrap::ArrayOfTables(name) => outer.insert(
                name.clone(),
                toml::Value::Array(vec![
                    toml::Value::Table(toml::Table::new()),
                    toml::Value::Table(inner),
                ]),
            ),
        };
        inner = outer;
    }
    inner
}

proptest! {
    /// A secret at any depth, written as nested tables, inline tables or arrays of tables, is
    /// found.
    #[test]
    fn a_secret_at_any_depth_of_toml_is_found(
        wraps in prop::collection::vec(wrap(), 0..5),
        (key, value) in secret(),
    ) {
        let doc = document(&wraps, key, value);
        let text = toml::to_string(&doc).unwrap();
        prop_assert!(in_text(&text, Format::Toml), "{text}");
        // The same document with every table inline.
        let inline = toml::Value::Table(doc).to_string();
        prop_assert!(in_text(&format!("root = {inline}\n"), Format::Toml), "{inline}");
    }

    /// Without a secret, a document is clean.
    #[test]
    fn a_toml_document_without_a_secret_is_not(
        wraps in prop::collection::vec(wrap(), 0..5),
        key in plain_key(),
    ) {
        let doc = document(&wraps, key, toml::Value::String("https://host/x".into()));
        let text = toml::to_string(&doc).unwrap();
        prop_assert!(!in_text(&text, Format::Toml), "{text}");
    }

    /// No input makes a parser panic, and whatever does not parse counts as a credential.
    #[test]
    fn any_text_is_judged_without_panicking(text in "\\PC{0,200}") {
        for format in [Format::Toml, Format::Ini, Format::Npmrc] {
            let _ = in_text(&text, format);
        }
        if toml::from_str::<toml::Table>(&text).is_err() {
            prop_assert!(in_text(&text, Format::Toml));
        }
    }
}
