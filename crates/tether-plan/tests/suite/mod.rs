//! Helpers shared by the integration tests, and the list of test modules.

mod archive;
mod criteria;
mod parse;
mod patch;
mod render;
mod roundtrip;
mod untrusted;

/// A plan file from `tests/fixtures/` (shared with the CLI's tests).
pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}
