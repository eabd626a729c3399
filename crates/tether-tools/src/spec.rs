//! [`ToolSpec`]: what a model is told about a tool. It is defined here, with the tools, and the
//! model clients (`tether-model`) take it as it is and write it in each provider's wire format;
//! no other crate describes a tool a second way.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What a model is told about a tool: its name, what it does, and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// What it does and its limits, written for the model.
    pub description: String,
    /// The JSON Schema of its arguments (`{"type":"object","properties":…}`).
    pub parameters: Value,
}

impl ToolSpec {
    /// A tool with the given name, description and argument schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// A tool whose arguments are an object of `properties`, the `required` ones listed, and
    /// nothing else (`additionalProperties: false`): the shape every tether tool uses, and the
    /// one the argument check reads best.
    pub fn object(
        name: impl Into<String>,
        description: impl Into<String>,
        properties: Value,
        required: &[&str],
    ) -> Self {
        Self::new(
            name,
            description,
            json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            }),
        )
    }
}
