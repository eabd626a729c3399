//! Tool schemas every JSON Schema validator accepts: the strict ones agent CLIs use (Ajv in
//! strict mode, Zod's converters) refuse or complain of every `format` they do not know, and a
//! schema derived from a Rust type carries formats of the generator's own (`"uint"`, `"int64"`,
//! `"double"`). [`standard`] keeps only the formats the JSON Schema specification defines; a
//! number keeps its `minimum`, which says what `"uint"` meant.

use serde_json::{Map, Value};

/// The formats JSON Schema (2020-12) defines.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `schema` with every `format` that is not a standard one taken out, at any depth.
pub fn standard(schema: &mut Map<String, Value>) {
    if schema
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
    {
        schema.remove("format");
    }
    for value in schema.values_mut() {
        walk(value);
    }
}

fn walk(value: &mut Value) {
    match value {
        Value::Object(map) => standard(map),
        Value::Array(items) => items.iter_mut().for_each(walk),
        _ => {}
    }
}

/// Every `format` in `schema` that is not a standard one, with where it is (a JSON pointer).
pub fn unknown_formats(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    collect(schema, String::new(), &mut found);
    found
}

fn collect(value: &Value, at: String, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(f)) = map.get("format")
                && !STANDARD_FORMATS.contains(&f.as_str())
            {
                found.push(format!("{at}/format = {f:?}"));
            }
            for (key, child) in map {
                collect(child, format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                collect(child, format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_generators_format_goes_and_its_minimum_stays() {
        let mut schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "format": "uint", "minimum": 0},
            "when": {"type": "string", "format": "date-time"},
            "list": {"type": "array", "items": {"type": "number", "format": "double"}},
            "any": {"anyOf": [{"type": "integer", "format": "int64"}, {"type": "null"}]},
        }});
        assert_eq!(unknown_formats(&schema).len(), 3);
        standard(schema.as_object_mut().unwrap());
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {
                "n": {"type": "integer", "minimum": 0},
                "when": {"type": "string", "format": "date-time"},
                "list": {"type": "array", "items": {"type": "number"}},
                "any": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            }})
        );
        assert!(unknown_formats(&schema).is_empty());
    }

    #[test]
    fn a_property_named_format_is_not_a_format() {
        let mut schema = json!({"type": "object", "properties": {
            "format": {"type": "string", "enum": ["text", "json"]},
        }});
        let before = schema.clone();
        standard(schema.as_object_mut().unwrap());
        assert_eq!(schema, before);
    }
}
