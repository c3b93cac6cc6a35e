//! Records the git commit the binary is built from (when built from a checkout), for the
//! provenance that runs and reports carry.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).map(|c| {
        // Uncommitted changes to tracked files: the commit alone does not say what was built.
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        if dirty { format!("{c}-dirty") } else { c }
    });
    println!(
        "cargo:rustc-env=CDNLAB_GIT_COMMIT={}",
        commit.unwrap_or_default()
    );
    // Rebuild when HEAD moves (a commit, a checkout) or the index changes (staged edits).
    // (Only files that exist: a missing one would make cargo rerun this every build.)
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let mut watch = vec!["HEAD".to_string(), "index".to_string()];
        watch.extend(git(&["symbolic-ref", "-q", "HEAD"]));
        for f in watch {
            let path = std::path::Path::new(&dir).join(f);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
