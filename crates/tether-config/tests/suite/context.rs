//! `loop.context`: what the agent keeps between the iterations of a goal run.

use tether_config::IterationContext;

use super::{config, problem};

#[test]
fn every_iteration_starts_fresh_by_default() {
    assert_eq!(config("").r#loop.context, IterationContext::Fresh);
    assert_eq!(
        config("[loop]\nmax_iterations = 5\n").r#loop.context,
        IterationContext::Fresh
    );
}

#[test]
fn both_choices_are_read() {
    let read = |value: &str| {
        config(&format!("[loop]\ncontext = \"{value}\"\n"))
            .r#loop
            .context
    };
    assert_eq!(read("continue"), IterationContext::Continue);
    assert_eq!(read("fresh"), IterationContext::Fresh);
}

#[test]
fn a_bad_value_names_the_file_the_line_and_the_choices() {
    assert_eq!(
        problem("[loop]\nmax_iterations = 5\ncontext = \"resume\"\n"),
        "tether.toml:3: loop.context: must be one of fresh | continue, got \"resume\""
    );
    assert_eq!(
        problem("[loop]\ncontext = \"continu\"\n"),
        "tether.toml:2: loop.context: must be one of fresh | continue, got \"continu\"; did you \
         mean \"continue\"?"
    );
    assert_eq!(
        problem("[loop]\ncontext = true\n"),
        "tether.toml:2: loop.context: must be one of fresh | continue, got a boolean"
    );
}
