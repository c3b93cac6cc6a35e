//! `reproduce`: the report and claims, partial runs that never replace another report, the
//! report's browser check, and the cluster files' shards.

use super::*;

/// A partial reproduce never replaces another report: without --out an --only selection writes
/// to a folder of its own; into a folder holding another selection's report it is refused
/// (the report stays byte for byte) unless --replace; the same selection may run there again.
#[test]
fn a_partial_reproduce_never_replaces_another_report() {
    // Two of the quickest experiments (about a second each at quick scale).
    let d = tempfile::tempdir().unwrap();
    let two = ["reproduce", "--only", "mh-x1", "--only", "gwtw-e8"];
    ok(cdnlab(&two, d.path()));
    let own = d.path().join("out/reproduce-gwtw-e8+mh-x1");
    assert!(own.join("report.html").is_file() && own.join("claims.json").is_file());
    assert!(!d.path().join("out/reproduce").exists());
    // Another report in out/reproduce (two experiments stand in for every one).
    let into = |args: &[&str]| {
        let mut v = args.to_vec();
        v.extend(["--out", "out/reproduce"]);
        cdnlab(&v, d.path())
    };
    ok(into(&two));
    let report = |f: &str| read(&d.path().join("out/reproduce").join(f));
    let before = (report("claims.json"), report("report.html"));
    fails_with(
        &into(&["reproduce", "--only", "mh-x1"]),
        &[
            "out/reproduce holds the report of gwtw-e8, mh-x1, quick scale",
            "this run (mh-x1, quick scale)",
            "--replace",
        ],
    );
    // Another scale is another report too.
    fails_with(
        &into(&[
            "reproduce",
            "--full",
            "--only",
            "gwtw-e8",
            "--only",
            "mh-x1",
        ]),
        &["gwtw-e8, mh-x1, full scale", "--replace"],
    );
    assert!(before == (report("claims.json"), report("report.html")));
    // The same selection again (its cells reused), in another order of --only.
    ok(into(&["reproduce", "--only", "gwtw-e8", "--only", "mh-x1"]));
    ok(into(&["reproduce", "--only", "mh-x1", "--replace"]));
    let doc: serde_json::Value = serde_json::from_slice(&report("claims.json")).unwrap();
    assert_eq!(doc["experiments"].as_array().unwrap().len(), 1, "{doc}");
}

#[test]
fn reproduce_quick_writes_report_and_claims() {
    let d = tempfile::tempdir().unwrap();
    // Two of the registered experiments, one per paper, keep this test short; every
    // registered scenario is loaded by a unit test of the registry.
    let args = [
        "reproduce",
        "--out",
        "r",
        "--only",
        "cache-che",
        "--only",
        "gwtw-e8",
    ];
    let out = cdnlab(&args, d.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&read(&d.path().join("r/claims.json"))).unwrap();
    // Provenance: the build, the command, start, duration, threads, machine; seeds per experiment.
    let prov = &doc["provenance"];
    for k in [
        "version", "commit", "command", "started", "seconds", "threads", "cores", "os",
    ] {
        assert!(prov.get(k).is_some(), "provenance without {k}: {prov}");
    }
    assert_eq!(prov["command"][1], "reproduce");
    let seeds: Vec<_> = items(&doc["experiments"])
        .map(|e| (e["id"].as_str().unwrap(), e["seed"].as_u64().unwrap()))
        .collect();
    assert_eq!(seeds.len(), 2, "{seeds:?}");
    // Where the time went: seconds per experiment in claims.json and a table at the end.
    for e in doc["experiments"].as_array().unwrap() {
        assert!(e["seconds"].as_f64().is_some_and(|s| s > 0.0), "{e}");
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let table: Vec<&str> = err
        .lines()
        .skip_while(|l| !l.starts_with("experiment "))
        .take(4)
        .collect();
    assert_eq!(table.len(), 4, "{err}");
    assert!(
        table[1..3].iter().any(|l| l.starts_with("cache-che ")),
        "{err}"
    );
    assert!(table[3].starts_with("total "), "{err}");
    assert!(err.contains("wall clock "), "{err}");
    // Every cell run, with its seconds: what bench/reproduce.sh turns into expected times.
    let cells: u64 = items(&doc["experiments"])
        .map(|e| e["cells"].as_u64().unwrap())
        .sum();
    let timings = String::from_utf8(read(&d.path().join("r/cell-seconds.csv"))).unwrap();
    assert_eq!(timings.lines().count() as u64, 1 + cells, "{timings}");
    assert!(
        timings.starts_with("scale,experiment,cell,seconds\nquick,"),
        "{timings}"
    );
    let claims = doc["claims"].as_array().unwrap();
    assert!(!claims.is_empty());
    for c in claims {
        for k in ["id", "paper", "claim", "measured", "expected", "pass"] {
            assert!(c.get(k).is_some(), "claim without {k}: {c}");
        }
        assert!(c["paper"] == "cache" || c["paper"] == "gwtw", "{c}");
        assert_eq!(c["pass"], true, "{c}");
    }
    let ids: Vec<&str> = claims.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(
        ids.contains(&"cache.C1") && ids.contains(&"gwtw.C1-video"),
        "{ids:?}"
    );
    for c in claims {
        let words = c["in_words"].as_str().unwrap_or_default();
        assert!(
            !words.is_empty(),
            "claim without its measurement in words: {c}"
        );
    }
    let html = String::from_utf8(read(&d.path().join("r/report.html"))).unwrap();
    assert!(html.contains("<img src=") && html.contains("cache.C1") && html.contains("gwtw-e8"));
    assert!(
        html.contains("Produced by cdnlab ") && html.contains("Seeds: "),
        "provenance"
    );
    // The recorded emulation claims (scenarios/verdicts-emulation.csv), in their own table.
    assert!(
        html.contains("Emulation against simulation (testbed, recorded)")
            && html.contains("EMU-GWTW-1")
            && html.contains("EMU-TP-1"),
        "the emulation record"
    );
    // In a real browser at 1280 px: nothing wider than the window, every figure loads, every
    // claim links to its experiment's section.
    if let Some(r) = browser_check(&d.path().join("r/report.html")) {
        assert_eq!(r["too_wide"], serde_json::json!([]), "{r}");
        assert_eq!(r["broken_images"], serde_json::json!([]), "{r}");
        assert_eq!(r["dangling_links"], serde_json::json!([]), "{r}");
        assert_eq!(r["rows_without_link"], 0, "{r}");
        assert!(r["images"].as_u64().unwrap() >= 3, "{r}");
        // Each claim twice: in the table of its kind and in its experiment's section.
        assert_eq!(
            r["claim_rows"].as_u64().unwrap(),
            2 * claims.len() as u64,
            "{r}"
        );
    }
}

/// Measures a page in headless Chromium at 1280 x 900: elements reaching past the window's
/// width, images that did not load, `#` links to no element, claim-table rows without a link.
const CHECK_SCRIPT: &str = r##"<script>
window.addEventListener('load', () => {
  const de = document.documentElement;
  const r = {width: de.clientWidth, scroll_width: de.scrollWidth};
  r.too_wide = [...document.querySelectorAll('body *')]
    .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > de.clientWidth + 1)
    .slice(0, 10).map(e => e.tagName + (e.id ? '#' + e.id : ''));
  if (de.scrollWidth > de.clientWidth && !r.too_wide.length) r.too_wide.push('page');
  const imgs = [...document.images];
  r.images = imgs.length;
  r.broken_images = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'));
  const rows = [...document.querySelectorAll('table.claims tr')].filter(tr => tr.querySelector('td'));
  r.claim_rows = rows.length;
  r.rows_without_link = rows.filter(tr => !tr.querySelector('a[href^="#"]')).length;
  r.dangling_links = [...document.querySelectorAll('a[href^="#"]')]
    .map(a => a.getAttribute('href').slice(1))
    .filter(id => !document.getElementById(decodeURIComponent(id)));
  const out = document.createElement('pre');
  out.id = 'cdnlab-check';
  out.textContent = JSON.stringify(r);
  document.body.appendChild(out);
});
</script>"##;

/// Runs [`CHECK_SCRIPT`] on `page` (a copy beside it, so relative links resolve) and returns
/// its measurements. Without Chromium: None, with a skip line, or a failure under CI
/// (cdnlab_testkit::need).
fn browser_check(page: &Path) -> Option<serde_json::Value> {
    let bin = cdnlab_testkit::need(cdnlab_testkit::CHROMIUM, cdnlab_testkit::chromium())?;
    let html = String::from_utf8(read(page)).unwrap();
    let copy = page.with_file_name("report-check.html");
    std::fs::write(
        &copy,
        html.replace("</body>", &format!("{CHECK_SCRIPT}</body>")),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--window-size=1280,900",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", copy.display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start chromium");
    // Bounded: a browser that hangs fails the test instead of holding CI.
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut dom = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut dom).unwrap();
    let json = dom
        .split("<pre id=\"cdnlab-check\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("no check result in chromium's DOM: {dom:.500}"));
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    Some(serde_json::from_str(&json).unwrap())
}

/// The browser check fails on a doctored report: a table wider than the window, an image that
/// does not load, a claim linking to a missing section and a claim row without a link.
#[test]
fn browser_check_catches_overflow_broken_images_and_dangling_links() {
    let d = tempfile::tempdir().unwrap();
    let page = d.path().join("report.html");
    std::fs::write(
        &page,
        "<!doctype html><html><body><h2 id=\"a\">A</h2>\
         <table class=\"claims\"><tr><th>x</th></tr>\
         <tr><td><a href=\"#a\">a</a></td></tr><tr><td><a href=\"#nowhere\">b</a></td></tr>\
         <tr><td>no link</td></tr></table>\
         <table><tr><td style=\"white-space:nowrap\">wide wide wide wide wide wide wide wide \
         wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide \
         wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide wide</td>\
         </tr></table><img src=\"missing.svg\" alt=\"m\"></body></html>",
    )
    .unwrap();
    let Some(r) = browser_check(&page) else {
        return;
    };
    assert_ne!(r["too_wide"], serde_json::json!([]), "{r}");
    assert_eq!(
        r["broken_images"],
        serde_json::json!(["missing.svg"]),
        "{r}"
    );
    assert_eq!(r["dangling_links"], serde_json::json!(["nowhere"]), "{r}");
    assert_eq!(r["rows_without_link"], 1, "{r}");
}

/// A reproduction folder's results: per experiment, every file but scenario.toml's provenance
/// (which says how each folder was made), and claims.json's claims.
fn reproduction(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for exp in ["cache-che-quick", "gwtw-e8-quick"] {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(exp))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(exp).display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".csv") || n.ends_with(".svg") || n == "scenario.toml")
            .collect();
        names.sort();
        for n in names {
            let bytes = read(&dir.join(exp).join(&n));
            let bytes = if n == "scenario.toml" {
                scenario_part(bytes)
            } else {
                bytes
            };
            files.push((format!("{exp}/{n}"), bytes));
        }
    }
    let doc: serde_json::Value = serde_json::from_slice(&read(&dir.join("claims.json"))).unwrap();
    files.push(("claims".into(), doc["claims"].to_string().into_bytes()));
    files
}

/// The shipped cluster files work as shipped: examples/slurm/reproduce.sbatch run for every
/// array index (as Slurm would, with SLURM_ARRAY_TASK_ID set), then merge.sbatch; and the
/// Kubernetes Indexed Job's command for every completion index (JOB_COMPLETION_INDEX), then the
/// merge Job's. Both give exactly a single run's results and claims.
#[cfg(unix)]
#[test]
fn cluster_files_shard_and_merge_to_a_single_runs_results() {
    let d = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let bin = env!("CARGO_BIN_EXE_cdnlab");
    let only = "--only cache-che --only gwtw-e8";
    let mut args = vec!["reproduce", "--out", "single"];
    args.extend(only.split(' '));
    ok(cdnlab(&args, d.path()));
    let single = reproduction(&d.path().join("single"));

    // Slurm: the array's tasks, then the merge.
    let slurm = |script: &str, task: Option<u32>| {
        let mut c = Command::new("bash");
        c.arg(examples.join("slurm").join(script))
            .current_dir(d.path())
            .env("CDNLAB", bin)
            .env("CDNLAB_OUT", "slurm")
            .env("CDNLAB_ARGS", only)
            .env("SLURM_CPUS_PER_TASK", "1");
        if let Some(i) = task {
            c.env("SLURM_ARRAY_TASK_ID", (10 + i).to_string())
                .env("SLURM_ARRAY_TASK_MIN", "10")
                .env("SLURM_ARRAY_TASK_COUNT", "3");
        }
        ok(c.output().unwrap())
    };
    for i in 0..3 {
        let out = slurm("reproduce.sbatch", Some(i));
        assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("shard {i}/3 done")));
    }
    slurm("merge.sbatch", None);
    assert_eq!(single, reproduction(&d.path().join("slurm/reproduce")));

    // Kubernetes: the containers' commands, with the shared volume /data in the temporary
    // folder and cdnlab on PATH.
    let command = |manifest: &str| -> Vec<String> {
        let text = std::fs::read_to_string(examples.join("kubernetes").join(manifest)).unwrap();
        let line = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("command: "))
            .expect("a command line");
        serde_json::from_str(line).expect("a flow sequence of double-quoted strings")
    };
    let data = d.path().join("k8s");
    std::fs::create_dir_all(&data).unwrap();
    let path = format!(
        "{}:{}",
        Path::new(bin).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |manifest: &str, index: Option<u32>| {
        let cmd = command(manifest);
        let script = cmd[2].replace("/data", data.to_str().unwrap());
        let mut c = Command::new(&cmd[0]);
        c.args([&cmd[1], &script])
            .current_dir(d.path())
            .env("PATH", &path)
            .env("CDNLAB_SCALE", "--quick")
            .env("CDNLAB_ARGS", only);
        if let Some(i) = index {
            c.env("JOB_COMPLETION_INDEX", i.to_string())
                .env("SHARDS", "3");
        }
        ok(c.output().unwrap());
    };
    for i in 0..3 {
        run("reproduce-job.yaml", Some(i));
    }
    run("merge-job.yaml", None);
    assert_eq!(single, reproduction(&data.join("reproduce")));
}
