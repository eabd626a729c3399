//! A value that must never be printed.
//!
//! API keys come from the environment and are held in [`Secret`] so that no `Debug` of a config,
//! error or event can leak them. There is deliberately no `Display` and no `Serialize`: reading
//! the value takes an explicit call to [`Secret::expose`].

/// An API key or other credential. `Debug` prints `Secret(***)`.
///
/// ```
/// let key = tether_config::Secret::new("sk-123");
/// assert_eq!(format!("{key:?}"), "Secret(***)");
/// assert_eq!(key.expose(), "sk-123");
/// ```
///
/// There is no `Display`, so a key cannot end up in a message by accident:
///
/// ```compile_fail
/// let key = tether_config::Secret::new("sk-123");
/// let shown = format!("{key}");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The credential itself, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}
