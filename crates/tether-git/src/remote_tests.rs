use std::path::Path;
use std::process::Command;

use tokio_util::sync::CancellationToken;

use crate::remote::{Exchange, remote_head};

fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Pushes the clone's `tether/r-1-g` to the remote's branch of that name.
async fn push(git_dir: &Path, url: &str) -> crate::GitOutput {
    let refspecs = ["refs/heads/tether/r-1-g:refs/heads/tether/r-1-g".to_owned()];
    Exchange::Push {
        git_dir,
        url,
        refspecs: &refspecs,
    }
    .run(&[], &CancellationToken::new())
    .await
    .unwrap()
}

#[tokio::test]
async fn a_clone_fetches_and_pushes_branches_and_runs_no_hook_of_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sh(
        root,
        "git init -q --bare remote.git && git init -q -b main work && cd work \
         && git -c user.name=a -c user.email=a@x commit -q --allow-empty -m one \
         && git push -q ../remote.git main:refs/heads/tether/r-1",
    );
    let url = root.join("remote.git").display().to_string();
    let cancel = CancellationToken::new();
    let head = remote_head(&url, "tether/r-1", &[], &cancel).await.unwrap();
    assert_eq!(
        head.as_deref(),
        Some(sh(&root.join("work"), "git rev-parse HEAD").trim())
    );
    assert_eq!(remote_head(&url, "nope", &[], &cancel).await.unwrap(), None);

    let clone = root.join("clone");
    let cloned = Exchange::Clone {
        url: &url,
        branch: "tether/r-1",
        dir: &clone,
    }
    .run(&[], &cancel)
    .await
    .unwrap();
    assert!(cloned.ok(), "{}", cloned.stderr);
    let git_dir = clone.join(".git");
    // A hook of the repository's own would run at a push: it does not.
    std::fs::write(
        git_dir.join("hooks/pre-push"),
        "#!/bin/sh\ntouch \"$GIT_DIR/../hooked\"\nexit 1\n",
    )
    .unwrap();
    sh(&clone, "chmod +x .git/hooks/pre-push");
    sh(
        &clone,
        "git -c user.name=a -c user.email=a@x commit -q --allow-empty -m two \
         && git branch tether/r-1-g HEAD",
    );
    let pushed = push(&git_dir, &url).await;
    assert!(pushed.ok(), "{}", pushed.stderr);
    assert!(!clone.join("hooked").exists());
    let two = sh(&clone, "git rev-parse HEAD");
    assert_eq!(
        remote_head(&url, "tether/r-1-g", &[], &cancel)
            .await
            .unwrap()
            .as_deref(),
        Some(two.trim())
    );
    // Fetched into the first repository under its own name.
    let work_git = root.join("work/.git");
    let refspecs = ["+refs/heads/tether/r-1-g:refs/heads/tether/r-1-g".to_owned()];
    let fetched = Exchange::Fetch {
        git_dir: &work_git,
        url: &url,
        refspecs: &refspecs,
    }
    .run(&[], &cancel)
    .await
    .unwrap();
    assert!(fetched.ok(), "{}", fetched.stderr);
    assert_eq!(sh(&root.join("work"), "git rev-parse tether/r-1-g"), two);
    // A push that is no fast-forward is refused, never forced.
    sh(
        &clone,
        "git -c user.name=a -c user.email=a@x commit -q --allow-empty --amend -m other \
         && git branch -f tether/r-1-g HEAD",
    );
    let refused = push(&git_dir, &url).await;
    assert!(!refused.ok());
}
