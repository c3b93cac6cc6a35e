//! The README is a start page that must not lie: every file path it names exists, every anchor
//! it links to is a heading, every `cdnlab` command it shows runs with `--help` and knows each
//! flag shown, every scenario excerpt is the file's own lines, and the minimum Rust it states is
//! the workspace's. The same path and anchor checks cover `docs/README.md`, the index.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A markdown page split into what the checks read.
struct Page {
    /// Lines of code: fenced blocks, indented blocks, and inline code spans.
    code: Vec<String>,
    /// Fenced blocks with their language and the prose line before them.
    fences: Vec<(String, String, Vec<String>)>,
    /// Link targets, `[..](target)`.
    links: Vec<String>,
    /// GitHub's anchors of the headings.
    anchors: Vec<String>,
}

/// GitHub's heading anchor: lower case, spaces to hyphens, punctuation other than hyphens and
/// underscores dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn parse(md: &str) -> Page {
    let mut page = Page {
        code: Vec::new(),
        fences: Vec::new(),
        links: Vec::new(),
        anchors: Vec::new(),
    };
    let mut fence: Option<(String, String, Vec<String>)> = None;
    let mut before = String::new();
    for line in md.lines() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            match fence.take() {
                Some(f) => page.fences.push(f),
                None => fence = Some((lang.trim().to_string(), before.clone(), Vec::new())),
            }
            continue;
        }
        if let Some(f) = &mut fence {
            f.2.push(line.to_string());
            page.code.push(line.to_string());
            continue;
        }
        if let Some(h) = line.strip_prefix('#') {
            page.anchors.push(slug(h.trim_start_matches('#')));
        }
        if line.starts_with("    ") && !line.trim().is_empty() {
            page.code.push(line.trim().to_string());
        } else {
            page.code
                .extend(line.split('`').skip(1).step_by(2).map(|s| s.to_string()));
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            page.links.push(after[..end].to_string());
            rest = &after[end..];
        }
        if !line.trim().is_empty() {
            before = line.to_string();
        }
    }
    assert!(fence.is_none(), "an unclosed code fence");
    page
}

/// The places a path may start: the checkout's folders and files.
const ROOTS: &[&str] = &[
    "crates/",
    "docs/",
    "scenarios/",
    "examples/",
    "bench/",
    "media/",
    "player/",
    "python/",
    ".ci/",
];

/// Every token of `code` that names a file or folder of the checkout.
fn paths_in(code: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for line in code {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        for (i, tok) in tokens.iter().enumerate() {
            let t = tok.trim_matches(|c: char| "\"'()[],;:`".contains(c));
            let t = t.strip_prefix("./").unwrap_or(t);
            let t = t.split('[').next().unwrap_or(t);
            let after_path_flag = i > 0 && matches!(tokens[i - 1], "--path" | "--prefix");
            if ROOTS
                .iter()
                .any(|r| t.starts_with(r) || *r == format!("{t}/"))
                || (after_path_flag && !t.starts_with('-'))
            {
                out.push(t.trim_end_matches(['.', '/']).to_string());
            }
        }
    }
    out
}

/// Checks a page's paths and links, relative to `dir` (the page's folder).
fn check_paths_and_links(page: &Page, dir: &str, name: &str) {
    for p in paths_in(&page.code) {
        assert!(
            root().join(&p).exists(),
            "{name} names `{p}`, which does not exist"
        );
    }
    for link in &page.links {
        if link.starts_with("http") {
            continue;
        }
        let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
        let target = if file.is_empty() {
            None
        } else {
            let p = root().join(dir).join(file);
            assert!(p.exists(), "{name} links to {link}: no such file");
            Some(p)
        };
        if anchor.is_empty() {
            continue;
        }
        let anchors = match &target {
            None => page.anchors.clone(),
            Some(p) => parse(&std::fs::read_to_string(p).unwrap()).anchors,
        };
        assert!(
            anchors.iter().any(|a| a == anchor),
            "{name} links to {link}: no such heading (headings: {anchors:?})"
        );
    }
}

#[test]
fn readme_paths_and_links_exist() {
    let readme = parse(&text("README.md"));
    // The checks can fail: a page that names a missing file or heading is caught.
    let bad = parse("See `docs/nowhere.md` and [x](#no-such-heading).\n## Here\n");
    assert_eq!(paths_in(&bad.code), ["docs/nowhere.md"]);
    assert_eq!(bad.anchors, ["here"]);
    assert!(!readme.code.is_empty() && !readme.links.is_empty());
    check_paths_and_links(&readme, "", "README.md");
    check_paths_and_links(&parse(&text("docs/README.md")), "docs", "docs/README.md");
}

/// The subcommand words and the flags of one command line (after `cdnlab` or
/// `cargo run --release --`).
fn command(line: &str) -> Option<(Vec<String>, Vec<String>)> {
    let rest = line
        .trim()
        .strip_prefix("cdnlab ")
        .or_else(|| line.trim().strip_prefix("cargo run --release -- "))?;
    let rest = rest.split('#').next().unwrap_or(rest);
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let mut sub: Vec<String> = Vec::new();
    for t in &tokens {
        let word = !t.is_empty() && t.chars().all(|c| c.is_ascii_lowercase() || c == '-');
        let nested = sub.len() == 1 && matches!(sub[0].as_str(), "live" | "tp");
        if word && !t.starts_with('-') && (sub.is_empty() || nested) {
            sub.push(t.to_string());
        } else {
            break;
        }
    }
    let flags = tokens
        .iter()
        .flat_map(|t| t.split('|'))
        .map(|t| t.trim_matches(|c: char| "[]()\"',".contains(c)))
        .filter(|t| t.starts_with("--") && t.len() > 2)
        .map(|t| t.split('=').next().unwrap().to_string())
        .collect();
    Some((sub, flags))
}

#[test]
fn readme_commands_exist_with_their_flags() {
    let readme = parse(&text("README.md"));
    let mut seen = 0;
    for line in &readme.code {
        let Some((sub, flags)) = command(line) else {
            continue;
        };
        if sub.first().is_some_and(|s| s == "live" || s == "testbed") && !cfg!(feature = "live") {
            continue; // built without the live servers (and so without the testbed)
        }
        let out = Command::new(env!("CARGO_BIN_EXE_cdnlab"))
            .args(&sub)
            .arg("--help")
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "README shows `{line}`: `cdnlab {} --help` failed: {}",
            sub.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        for f in flags {
            let known = help.match_indices(f.as_str()).any(|(i, _)| {
                !help[i + f.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            });
            assert!(
                known,
                "README shows `{line}`: cdnlab {} has no {f}",
                sub.join(" ")
            );
        }
        seen += 1;
    }
    assert!(seen >= 8, "only {seen} commands found in the README");
    // The parser can fail: a made-up flag is caught by the same check.
    let (sub, flags) = command("cdnlab run s.toml --no-such-flag").unwrap();
    assert_eq!(
        (sub, flags),
        (vec!["run".to_string()], vec!["--no-such-flag".to_string()])
    );
}

#[test]
fn readme_examples_and_excerpts_match_the_files() {
    let md = text("README.md");
    let readme = parse(&md);
    // `--example NAME` programs.
    for line in &readme.code {
        let t: Vec<&str> = line.split_whitespace().collect();
        for w in t.windows(2).filter(|w| w[0] == "--example") {
            let name = w[1].trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
            assert!(
                root()
                    .join(format!("crates/cdnlab/examples/{name}.rs"))
                    .exists(),
                "README runs example {name}, which does not exist"
            );
        }
    }
    // A fenced block introduced as "From `FILE`" shows FILE's own lines, in order.
    let mut excerpts = 0;
    for (_, before, lines) in &readme.fences {
        let Some(file) = before
            .strip_prefix("From `")
            .and_then(|r| r.split('`').next())
        else {
            continue;
        };
        let whole = text(file);
        let mut have = whole.lines();
        for l in lines.iter().filter(|l| !l.trim().is_empty()) {
            assert!(
                have.any(|h| h == l),
                "README's excerpt of {file}: `{l}` is not there (or out of order)"
            );
        }
        excerpts += 1;
    }
    assert!(excerpts >= 1, "no scenario excerpt found");
    // The minimum Rust stated is the workspace's rust-version.
    let manifest = text("Cargo.toml");
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    assert!(
        md.contains(&format!("Rust {version} or newer")),
        "README does not state Rust {version}"
    );
    // About 250 lines at most: a start page, not the reference.
    assert!(md.lines().count() <= 260, "{} lines", md.lines().count());
}

/// docs/cache.md's table of policies is the registry's: every name in registry order, each with
/// the registry's line on it (the names and lines are declared once, in `cdnlab::cache`).
#[test]
fn the_cache_table_is_the_registry() {
    use cdnlab::Named;
    use cdnlab::cache::Policy;
    let doc = text("docs/cache.md");
    let rows: Vec<(String, String)> = doc
        .lines()
        .skip_while(|l| !l.starts_with("| name | policy"))
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            (
                cells[0]
                    .trim_start_matches("| ")
                    .trim_matches('`')
                    .to_string(),
                cells[1].to_string(),
            )
        })
        .collect();
    let registry: Vec<(String, String)> = Policy::ALL
        .iter()
        .map(|p| (p.name().to_string(), p.about().to_string()))
        .collect();
    assert_eq!(rows, registry);
}
