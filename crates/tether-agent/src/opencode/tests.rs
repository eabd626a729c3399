use std::path::Path;

use serde_json::{Value, json};

use super::{permission, xdg_env};

#[test]
fn bash_and_edit_ask_whatever_else_the_persons_permission_says() {
    let given = vec![(
        "OPENCODE_PERMISSION".to_owned(),
        json!({"bash": "allow", "webfetch": "deny"}).to_string(),
    )];
    let set: Value = serde_json::from_str(&permission(&given)).unwrap();
    assert_eq!(
        set,
        json!({"bash": "ask", "edit": "ask", "webfetch": "deny"})
    );
    let set: Value = serde_json::from_str(&permission(&[(
        "OPENCODE_PERMISSION".to_owned(),
        "not json".to_owned(),
    )]))
    .unwrap();
    assert_eq!(set, json!({"bash": "ask", "edit": "ask"}));
}

#[test]
fn its_xdg_directories_are_the_runs() {
    let env = xdg_env(Path::new("/run/opencode-config"));
    assert!(env.contains(&(
        "XDG_DATA_HOME".to_owned(),
        "/run/opencode-config/xdg/data".to_owned()
    )));
    assert_eq!(env.len(), 4);
}
