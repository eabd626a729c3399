//! The values of a configuration that are credentials, kept out of a run's record: a key a
//! declared table declares as a credential (a `[webhook] url` written in the file: the URL is
//! itself the webhook's key), an `[executor] env` value whose name says it holds a secret
//! (`ANTHROPIC_API_KEY`, `GH_TOKEN`…), and a
//! variable that configures whose name says so or whose value is a URL carrying a password
//! (`TETHER_STORE_URL` may). Each is recorded as a salted digest, so a change of it is still
//! seen, and its place in the recorded text holds [`PLACEHOLDER`].

use std::ops::Range;

use sha2::{Digest as _, Sha256};
use toml::de::{DeTable, DeValue};

use crate::{KeyKind, Schema};

/// What a credential's place holds in a record.
pub(crate) const PLACEHOLDER: &str = "(hidden)";

/// Whether a variable's name says it holds a secret (`ANTHROPIC_API_KEY`, `GH_TOKEN`,
/// `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`, `ANTHROPIC_AUTH_TOKEN`, `GOOGLE_CREDENTIALS`).
pub(crate) fn holds_secret(name: &str) -> bool {
    const WORDS: [&str; 6] = ["KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "AUTH"];
    let upper = name.to_ascii_uppercase();
    WORDS.iter().any(|word| upper.contains(word))
}

/// Whether the value at `path` of the file is a credential.
fn secret_key(path: &[&str], schema: &Schema) -> bool {
    match path {
        ["executor", "env", name] => holds_secret(name),
        [table, key] => schema
            .declared_table(table)
            .and_then(|decl| decl.key(key))
            .is_some_and(|key| key.kind == KeyKind::Credential),
        _ => false,
    }
}

/// Whether the value of the variable `name` that configures is a credential.
pub(crate) fn secret_var(name: &str, value: &str) -> bool {
    holds_secret(name) || url_with_password(value)
}

/// Whether `value` may be a URL whose user information carries a password
/// (`postgres://me:pw@db/x`): anything with a `:` before its last `@`, so a password holding
/// `/` or `#` is hidden too (a URL that only looks so is hidden needlessly, never shown).
fn url_with_password(value: &str) -> bool {
    let Some((_, rest)) = value.split_once("://") else {
        return false;
    };
    rest.rsplit_once('@')
        .is_some_and(|(user, _)| user.contains(':'))
}

/// A credential in a configuration's text.
pub(crate) struct InText {
    /// Its dotted path (`webhook.url`).
    pub(crate) at: String,
    /// Where its value (with the quotes) is in the text.
    pub(crate) span: Range<usize>,
    /// Its value.
    pub(crate) value: String,
}

/// Every credential in `text`, as `schema` says which keys are; none when the text is not
/// TOML.
pub(crate) fn in_text(text: &str, schema: &Schema) -> Vec<InText> {
    let Ok(doc) = DeTable::parse(text) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    walk(doc.get_ref(), schema, &mut Vec::new(), &mut found);
    found
}

fn walk<'t>(
    table: &'t DeTable<'_>,
    schema: &Schema,
    path: &mut Vec<&'t str>,
    found: &mut Vec<InText>,
) {
    for (key, value) in table {
        path.push(key.get_ref().as_ref());
        match value.get_ref() {
            DeValue::Table(inner) => walk(inner, schema, path, found),
            DeValue::String(s) if secret_key(path, schema) => found.push(InText {
                at: path.join("."),
                span: value.span(),
                value: s.to_string(),
            }),
            _ => {}
        }
        path.pop();
    }
}

/// `text` with each span replaced by its text (spans that do not overlap).
pub(crate) fn replaced(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = text.to_owned();
    for (span, with) in edits {
        if out.get(span.clone()).is_some() {
            out.replace_range(span, &with);
        }
    }
    out
}

/// `value` as a TOML basic string.
pub(crate) fn literal(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The salted digest of the credential `value` at `at`, in hex.
pub(crate) fn digest(salt: &str, at: &str, value: &str) -> String {
    let mut h = Sha256::new();
    for part in [salt, at, value] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A new salt: 16 random bytes, in hex.
pub(crate) fn salt() -> String {
    (0..16)
        .map(|_| format!("{:02x}", fastrand::u8(..)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_hold_secrets_are_told_from_those_that_do_not() {
        for secret in [
            "ANTHROPIC_API_KEY",
            "gh_token",
            "DB_PASSWORD",
            "ANTHROPIC_AUTH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "PASSWD",
        ] {
            assert!(holds_secret(secret), "{secret}");
        }
        for plain in [
            "ANTHROPIC_BASE_URL",
            "HTTPS_PROXY",
            "NODE_EXTRA_CA_CERTS",
            "ANTHROPIC_MODEL",
            "PI_CODING_AGENT_DIR",
        ] {
            assert!(!holds_secret(plain), "{plain}");
        }
    }

    #[test]
    fn a_url_carrying_a_password_is_a_credential() {
        assert!(secret_var("TETHER_STORE_URL", "postgres://me:pw@db/x"));
        assert!(!secret_var("TETHER_STORE_URL", "postgres://me@db/x"));
        assert!(secret_var("TETHER_STORE_URL", "postgres://me:a/b#c@db/x"));
        assert!(!secret_var(
            "ZULIP_SERVER_URL",
            "https://chat.example:8443/a"
        ));
        assert!(!secret_var("HOME", "/home/me"));
    }

    #[test]
    fn credentials_are_found_however_the_file_spells_their_tables() {
        let schema = crate::test_table::schema();
        let text = "[pager]\nurl = \"https://hooks.example/T/B/x\"\n\
                    [executor]\nenv = { GH_TOKEN = \"ghp_1\", ANTHROPIC_BASE_URL = \"u\" }\n";
        let found: Vec<(String, String)> = in_text(text, &schema)
            .into_iter()
            .map(|c| (c.at, c.value))
            .collect();
        assert_eq!(
            found,
            [
                ("executor.env.GH_TOKEN".to_owned(), "ghp_1".to_owned()),
                (
                    "pager.url".to_owned(),
                    "https://hooks.example/T/B/x".to_owned()
                ),
            ]
        );
        // Without the table declared, its key is no credential (and the file no valid one).
        assert_eq!(in_text(text, &crate::Schema::core()).len(), 1);
        let dotted = "executor.env.GH_TOKEN = 'ghp_2'\n";
        assert_eq!(in_text(dotted, &schema)[0].at, "executor.env.GH_TOKEN");
        assert_eq!(&dotted[in_text(dotted, &schema)[0].span.clone()], "'ghp_2'");
    }

    #[test]
    fn a_literal_reads_back_as_its_value() {
        for value in [
            "plain",
            "q\"uote",
            "back\\slash",
            "line\nbreak\u{7f}",
            "ünï",
        ] {
            let text = format!("v = {}\n", literal(value));
            let doc = DeTable::parse(&text).unwrap();
            assert_eq!(
                doc.get_ref().get("v").unwrap().get_ref().as_str(),
                Some(value)
            );
        }
    }
}
