//! Wrong models: the real simulator with one of the papers' rules replaced by a plausible
//! wrong one (each an option of the library's simulator, documented as a wrong model), run
//! through the reproductions' own pipeline: the same scenarios, seeds and claim functions.
//! `cdnlab reproduce --wrong ID` runs one; `bench/wrong_models.sh` runs them all and records
//! in `scenarios/wrong-models.csv` what every claim said under each; each claim's falsifier
//! names the wrong models it must reject (`Falsifier::rejects`), and
//! `every_claim_rejects_its_wrong_models` holds the record to that (docs/claims.md, "Wrong
//! models").

use cdnlab::sim::Value;
use std::collections::BTreeMap;

/// One wrong model.
pub struct WrongModel {
    /// Short id, as `--wrong` takes it.
    pub id: &'static str,
    /// What it changes, in words.
    pub what: &'static str,
    /// The reproductions it runs (registry ids): those with cells it changes.
    pub runs: &'static [&'static str],
    /// How it changes one cell's parameters; cells it leaves alone keep the paper's rules.
    /// The rows keep the original cell's parameters, so each claim reads the wrong model's
    /// results under the labels it expects, as it would read a faulty implementation's.
    pub alter: fn(&mut BTreeMap<String, Value>),
}

fn is(m: &BTreeMap<String, Value>, key: &str, text: &str) -> bool {
    matches!(m.get(key), Some(Value::Text(t)) if t == text)
}

fn int(m: &BTreeMap<String, Value>, key: &str) -> i64 {
    match m.get(key) {
        Some(Value::Int(i)) => *i,
        Some(Value::Float(f)) => *f as i64,
        _ => 0,
    }
}

fn text(m: &mut BTreeMap<String, Value>, key: &str, to: &str) {
    m.insert(key.into(), Value::Text(to.into()));
}

/// Sets `key` to `to` where it is `from` (other cells keep the paper's rule).
fn swap(m: &mut BTreeMap<String, Value>, key: &str, from: &str, to: &str) {
    if is(m, key, from) {
        text(m, key, to);
    }
}

/// Every GWTW reproduction with cells of k >= 2 users running GWTW.
const GWTW_K2: &[&str] = &[
    "gwtw-e1",
    "gwtw-e2",
    "gwtw-e3",
    "gwtw-e3-c1",
    "gwtw-e4",
    "gwtw-e5",
    "gwtw-e6",
    "gwtw-e8",
    "gwtw-e9-livelock",
    "gwtw-e9-main",
    "gwtw-winner",
    "gwtw-baselines",
    "gwtw-load-c2",
    "gwtw-load-c1",
    "gwtw-load-n",
];

/// The multi-hash reproductions that run the replicating DHT (experiment `multihash`).
const MH_DHT: &[&str] = &["mh-steady", "mh-x3", "mh-x4", "mh-x5", "mh-x6"];

/// Every wrong model, in the order the record lists them.
pub fn all() -> Vec<WrongModel> {
    vec![
        WrongModel {
            id: "cache-fifo",
            what: "the simulated cache is FIFO (no promotion on a hit), not LRU",
            runs: &["cache-che"],
            alter: |m| text(m, "policy", "fifo"),
        },
        WrongModel {
            id: "gwtw-uniform",
            what: "a finished trial settles on a uniformly random candidate, not the winner \
                   (pick = uniform)",
            runs: GWTW_K2,
            alter: |m| {
                if is(m, "policy", "gwtw") && int(m, "k") >= 2 {
                    text(m, "pick", "uniform");
                }
            },
        },
        WrongModel {
            id: "gwtw-slow-retrial",
            what: "the re-trial probability falls as 1/n (q = min(1, 10/n)), so convergence \
                   takes time linear in n",
            runs: &["gwtw-e2"],
            alter: |m| {
                let n = int(m, "servers").max(1) as f64;
                m.insert("q".into(), Value::Float((10.0 / n).min(1.0)));
            },
        },
        WrongModel {
            id: "gwtw-no-retrial",
            what: "a settled user never measures again (retrial = never): it keeps its first \
                   winner",
            runs: &[
                "gwtw-e1",
                "gwtw-e2",
                "gwtw-e6",
                "gwtw-e8",
                "gwtw-e9-livelock",
                "gwtw-e9-main",
                "gwtw-baselines",
                "gwtw-load-c2",
                "gwtw-load-c1",
                "gwtw-load-n",
            ],
            alter: |m| {
                if is(m, "policy", "gwtw") && int(m, "k") >= 2 {
                    text(m, "retrial", "never");
                }
            },
        },
        WrongModel {
            id: "gwtw-fixed-window",
            what: "the history window is ignored: every user measures 20 outcomes whatever tau \
                   says",
            runs: &["gwtw-e3", "gwtw-e3-c1"],
            alter: |m| {
                m.insert("tau".into(), Value::Int(20));
            },
        },
        WrongModel {
            id: "gwtw-k1-selects",
            what: "the k = 1 control is secretly GWTW with k = 2 (and so are partial \
                   deployment's k = 1 users)",
            runs: &["gwtw-e1", "gwtw-e4", "gwtw-e6", "gwtw-e7", "gwtw-maxload"],
            alter: |m| {
                if int(m, "k") == 1 && is(m, "policy", "gwtw") {
                    m.insert("k".into(), Value::Int(2));
                }
                if matches!(m.get("partial"), Some(Value::Float(p)) if *p < 1.0) {
                    m.insert("partial".into(), Value::Float(1.0));
                }
            },
        },
        WrongModel {
            id: "gwtw-flat-popularity",
            what: "each user's requests are uniform over its catalogue: the Zipf exponent is \
                   dropped (alpha = 0 whatever the cell says)",
            runs: &["gwtw-e4"],
            alter: |m| {
                m.insert("alpha".into(), Value::Float(0.0));
            },
        },
        WrongModel {
            id: "gwtw-striped",
            what: "a user's \"random\" candidates are its id and the next ones modulo n (draw = \
                   striped), which spreads users evenly",
            runs: &["gwtw-e7", "gwtw-maxload", "gwtw-orient"],
            alter: |m| text(m, "draw", "striped"),
        },
        WrongModel {
            id: "gwtw-two-choice-first",
            what: "a user draws two servers but joins the first without comparing their loads \
                   (pick = first)",
            runs: &["gwtw-balls"],
            alter: |m| text(m, "pick", "first"),
        },
        WrongModel {
            id: "gwtw-rewarm-ignored",
            what: "E9's exclude_rewarm is silently ignored: every miss counts, as under the \
                   paper's rule",
            runs: &["gwtw-load-n", "gwtw-e9-livelock", "gwtw-e9-main"],
            alter: |m| {
                if m.get("exclude_rewarm") == Some(&Value::Bool(true)) {
                    m.insert("exclude_rewarm".into(), Value::Bool(false));
                }
            },
        },
        WrongModel {
            id: "gwtw-paper-is-e9",
            what: "the paper's re-trial rule is replaced by cdnlab's E9 variant (retrial = move \
                   with exclude_rewarm), as a reconstruction that took the repair for the paper \
                   would run",
            runs: &[
                "gwtw-e5",
                "gwtw-e9-livelock",
                "gwtw-load-n",
                "gwtw-load-c1",
                "gwtw-load-c2",
            ],
            alter: |m| {
                if is(m, "policy", "gwtw")
                    && int(m, "k") >= 2
                    && !is(m, "retrial", "move")
                    && !is(m, "retrial", "never")
                    && m.get("exclude_rewarm") != Some(&Value::Bool(true))
                {
                    text(m, "retrial", "move");
                    m.insert("exclude_rewarm".into(), Value::Bool(true));
                }
            },
        },
        WrongModel {
            id: "mh-binary-search",
            what: "requests find a replica by binary search for the top, then a uniform pick \
                   (strategy = binary), not random binary search",
            runs: &["mh-x1", "mh-gaps", "mh-multigap", "mh-x5", "mh-x6"],
            alter: |m| swap(m, "strategy", "rbs", "binary"),
        },
        WrongModel {
            id: "mh-neighbour-probe",
            what: "random gap removal probes the neighbour i - 1, not a uniform index below i \
                   (probe = neighbour)",
            runs: &["mh-gaps"],
            alter: |m| text(m, "probe", "neighbour"),
        },
        WrongModel {
            id: "mh-linear-search",
            what: "an overloaded replica finds the smallest unused index by a linear scan up from \
                   its own, not by galloping and bisecting (search = linear)",
            runs: MH_DHT,
            alter: |m| text(m, "search", "linear"),
        },
        WrongModel {
            id: "mh-random-place",
            what: "an overloaded replica replicates to a pseudo-random index at or above the \
                   smallest unused one (place = random), not to the smallest",
            runs: MH_DHT,
            alter: |m| text(m, "place", "random"),
        },
        WrongModel {
            id: "mh-any-leave",
            what: "any replica the others could relieve leaves, not only the top (leave = any): \
                   middle replicas leave gaps",
            runs: MH_DHT,
            alter: |m| text(m, "leave", "any"),
        },
        WrongModel {
            id: "mh-one-growth",
            what: "every overload adds one replica per window (growth = one), whatever the \
                   growth rule asked for",
            runs: &["mh-steady", "mh-x4"],
            alter: |m| text(m, "growth", "one"),
        },
        WrongModel {
            id: "mh-no-repair",
            what: "gaps left by crashes are never repaired (repair = none)",
            runs: &["mh-x5", "mh-x6"],
            alter: |m| text(m, "repair", "none"),
        },
        WrongModel {
            id: "mh-successor-routing",
            what: "DHT lookups follow successor pointers only, not finger tables (routing = \
                   successors)",
            runs: &["mh-x6"],
            alter: |m| text(m, "routing", "successors"),
        },
        WrongModel {
            id: "mh-single-hash",
            what: "files are never replicated: multi-hash runs as single-hash placement",
            runs: &["mh-x3"],
            alter: |m| swap(m, "policy", "multihash", "single-hash"),
        },
        WrongModel {
            id: "tp-nearest",
            what: "the Transportation Problem's allocation is replaced by nearest-server \
                   allocation",
            runs: &["tp-t1", "tp-t1-random", "tp-t2", "tp-t3"],
            alter: |m| swap(m, "policy", "optimal", "nearest"),
        },
        WrongModel {
            id: "tp-sharing-nearest-only",
            what: "full sharing tries only the nearest server (sharing runs as nearest)",
            runs: &["tp-t1", "tp-t1-random"],
            alter: |m| swap(m, "policy", "sharing", "nearest"),
        },
        WrongModel {
            id: "tp-never-reallocate",
            what: "re-allocation never triggers (b_max = 1: no window blocks more than all)",
            runs: &["tp-t3", "tp-net-t3"],
            alter: |m| {
                if m.get("reallocate") == Some(&Value::Bool(true)) {
                    m.insert("b_max".into(), Value::Float(1.0));
                }
            },
        },
        WrongModel {
            id: "tp-balance-nearest",
            what: "CP-1's balancing pick (largest free fraction) picks the nearest server",
            runs: &["tp-balance"],
            alter: |m| swap(m, "choice", "fraction", "nearest"),
        },
        WrongModel {
            id: "tp-lp-solver",
            what: "the allocation is solved by the general LP solver, which has no warm start, \
                   not by the network simplex (solver = lp)",
            runs: &["tp-t5"],
            alter: |m| text(m, "solver", "lp"),
        },
        WrongModel {
            id: "tp-heuristic-solver",
            what: "Vogel's approximation is passed off as the optimum (solver = vogel)",
            runs: &["tp-t5"],
            alter: |m| text(m, "solver", "vogel"),
        },
        WrongModel {
            id: "tp-vogel-dearest",
            what: "Vogel's method with a flipped comparator: each line's dearest open cell is \
                   filled first (vogel_order = dearest)",
            runs: &["tp-t5"],
            alter: |m| text(m, "vogel_order", "dearest"),
        },
        WrongModel {
            id: "tp-shared-paths",
            what: "the sources of a multi-source stream share one bottleneck: striping without \
                   path diversity (paths = shared)",
            runs: &["tp-t4"],
            alter: |m| text(m, "paths", "shared"),
        },
        WrongModel {
            id: "tp-oracle-demand",
            what: "a re-allocation solves for the true new demand, not the demand estimated \
                   from the window's arrivals (estimate = true)",
            runs: &["tp-t3"],
            alter: |m| text(m, "estimate", "true"),
        },
        WrongModel {
            id: "tp-net-matched",
            what: "on real networks, server capacity is placed where the demand is (capacity = \
                   matched): a CDN built for its users, which leaves the allocation nothing to fix",
            runs: &["tp-net-t1"],
            alter: |m| text(m, "capacity", "matched"),
        },
        WrongModel {
            id: "tp-net-links-everywhere",
            what: "on real networks, links limit streams in every cell (links = carried), so \
                   the optimal allocation is no longer a partition of circuits",
            runs: &["tp-net-t1"],
            alter: |m| text(m, "links", "carried"),
        },
        WrongModel {
            id: "gwtw-prequal-blind",
            what: "Prequal's probes report requests in flight as latency: least load, blind to \
                   a server's speed",
            runs: &["gwtw-baselines-load"],
            alter: |m| text(m, "prequal_latency", "load"),
        },
        WrongModel {
            id: "steering-no-reload",
            what: "players never reload the steering manifest: the first answer is kept (TTL \
                   ignored)",
            runs: &["steering"],
            alter: |m| {
                m.insert("ttl".into(), Value::Float(3600.0));
            },
        },
        WrongModel {
            id: "steering-probe-provisioned",
            what: "a probe's latency is computed from the pathway's configured capacity, blind \
                   to its degradation",
            runs: &["steering"],
            alter: |m| text(m, "probe", "provisioned"),
        },
        WrongModel {
            id: "steering-no-admission",
            what: "the edges never enforce the Transportation Problem's thresholds (TP-R4)",
            runs: &["steering"],
            alter: |m| text(m, "admission", "ignored"),
        },
        WrongModel {
            id: "tp-no-slack",
            what: "slack is never shared: every reserve is 1 (complete partitioning)",
            runs: &["tp-slack"],
            alter: |m| {
                m.insert("reserve".into(), Value::Float(1.0));
            },
        },
    ]
}

/// The wrong models each claim must reject: in scenarios/wrong-models.csv the claim fails
/// under each of them (`every_claim_rejects_its_wrong_models`). Every claim is here or in
/// [`NOT_YET`].
pub const REJECTS: &[(&str, &[&str])] = &[
    ("cache.C1", &["cache-fifo"]),
    ("gwtw.C1", &["gwtw-no-retrial"]),
    ("gwtw.C1-time", &["gwtw-k1-selects"]),
    ("gwtw.C1-quick", &["gwtw-slow-retrial"]),
    ("gwtw.C1-winner", &["gwtw-uniform"]),
    ("gwtw.C1-load", &["gwtw-no-retrial"]),
    ("gwtw.C1-load-c1", &["gwtw-no-retrial"]),
    ("gwtw.C1-whp", &["gwtw-no-retrial"]),
    ("gwtw.C1-video", &["gwtw-no-retrial"]),
    ("gwtw.C3", &["gwtw-fixed-window"]),
    ("gwtw.C3-slower", &["gwtw-fixed-window"]),
    ("gwtw.C4", &["gwtw-k1-selects", "gwtw-flat-popularity"]),
    ("gwtw.C4-control", &["gwtw-flat-popularity"]),
    ("gwtw.C5", &["gwtw-k1-selects"]),
    ("gwtw.C5-c1", &["gwtw-k1-selects", "gwtw-no-retrial"]),
    ("gwtw.E6-sweep", &["gwtw-k1-selects"]),
    ("gwtw.C2", &["gwtw-striped"]),
    ("gwtw.C2-video", &["gwtw-k1-selects", "gwtw-striped"]),
    ("gwtw.C2-failure", &["gwtw-k1-selects", "gwtw-striped"]),
    ("gwtw.k1-balls", &["gwtw-k1-selects", "gwtw-striped"]),
    ("gwtw.orient", &["gwtw-striped"]),
    ("gwtw.C6-two-choice", &["gwtw-two-choice-first"]),
    (
        "gwtw.E9",
        &["gwtw-no-retrial", "gwtw-rewarm-ignored", "gwtw-paper-is-e9"],
    ),
    ("gwtw.E9-load", &["gwtw-rewarm-ignored", "gwtw-paper-is-e9"]),
    ("gwtw.C1-break", &["gwtw-paper-is-e9"]),
    ("gwtw.E5-collapse", &["gwtw-paper-is-e9"]),
    ("gwtw.F2-livelock", &["gwtw-paper-is-e9"]),
    ("gwtw.E9-main", &["gwtw-no-retrial"]),
    ("gwtw.B1", &["gwtw-no-retrial"]),
    ("gwtw.B2", &["gwtw-prequal-blind"]),
    ("mh.rbs-uniform", &["mh-binary-search"]),
    ("mh.rbs-probes", &["mh-binary-search"]),
    ("mh.rbs-variance", &["mh-binary-search"]),
    ("mh.gap-single", &["mh-binary-search"]),
    ("mh.gap-multi", &["mh-binary-search"]),
    ("mh.gap-skew", &["mh-binary-search"]),
    ("mh.failure-recursion", &["mh-binary-search"]),
    ("mh.x6-probes", &["mh-binary-search"]),
    ("mh.balance-gain", &["mh-single-hash", "mh-any-leave"]),
    ("mh.steady-replicas", &["mh-random-place", "mh-one-growth"]),
    ("mh.steady-noise", &["mh-random-place", "mh-one-growth"]),
    (
        "mh.flash-load",
        &["mh-random-place", "mh-any-leave", "mh-one-growth"],
    ),
    (
        "mh.flash-growth",
        &["mh-random-place", "mh-any-leave", "mh-one-growth"],
    ),
    ("mh.flash-shrink", &["mh-any-leave", "mh-one-growth"]),
    ("mh.invariants", &["mh-random-place", "mh-any-leave"]),
    (
        "mh.repair",
        &["mh-no-repair", "mh-random-place", "mh-any-leave"],
    ),
    ("mh.chord-hops", &["mh-successor-routing"]),
    ("mh.rgr-rounds", &["mh-neighbour-probe"]),
    ("mh.x6-replication", &["mh-linear-search"]),
    ("tp.gap", &["tp-nearest"]),
    ("tp.gap-random", &["tp-nearest", "tp-sharing-nearest-only"]),
    ("tp.hops", &["tp-nearest"]),
    ("tp.s4-lowest", &["tp-sharing-nearest-only"]),
    ("tp.erlang", &["tp-nearest"]),
    ("tp.reallocation", &["tp-never-reallocate", "tp-nearest"]),
    ("tp.reallocation-excess", &["tp-oracle-demand"]),
    ("tp.cluster-balance", &["tp-balance-nearest"]),
    ("tp.slack", &["tp-no-slack"]),
    ("tp.solver-exact", &["tp-heuristic-solver"]),
    ("tp.solver-faster", &["tp-lp-solver"]),
    ("tp.solver-warm", &["tp-lp-solver", "tp-heuristic-solver"]),
    ("tp.vogel", &["tp-vogel-dearest"]),
    ("tp.multisource", &["tp-shared-paths"]),
    ("tp.net-gap", &["tp-net-matched"]),
    ("tp.net-gap-predictor", &["tp-net-matched"]),
    ("tp.net-links", &["tp-net-matched"]),
    ("tp.net-erlang", &["tp-net-links-everywhere"]),
    ("tp.net-warm", &["tp-never-reallocate"]),
    ("steering.prequal-lowest", &["steering-probe-provisioned"]),
    (
        "steering.reaction",
        &["steering-no-reload", "steering-probe-provisioned"],
    ),
    ("steering.tp-startup", &["steering-no-admission"]),
];

/// Claims no wrong model of the simulator rejects yet, and why (docs/claims.md, "Wrong
/// models", keeps the same list). Their doctored-data falsifiers still run.
pub const NOT_YET: &[(&str, &str)] = &[
    (
        "tp.net-reallocation-zones",
        "fails under the model already: a finding against the expectation (docs/claims.md)",
    ),
    (
        "gwtw.C4-strict",
        "fails under the paper's rule already (an honest divergence)",
    ),
    (
        "gwtw.C3-failure",
        "fails under the paper's rule already (an honest divergence)",
    ),
    (
        "steering.static-worst",
        "no wrong model of the steering simulator breaks it yet: priority rebuffers most even \
         without its pathway degrading (it sends every session to 4/7 of the capacity) and \
         when players never reload (the adaptive policies' first answers still spread them)",
    ),
];

/// The wrong model with this id, or an error listing them.
pub fn find(id: &str) -> crate::error::Result<WrongModel> {
    let all = all();
    let ids: Vec<&str> = all.iter().map(|w| w.id).collect();
    all.into_iter().find(|w| w.id == id).ok_or_else(|| {
        crate::error::Error::Usage(format!(
            "--wrong {id}: no such wrong model (allowed: {})",
            ids.join(", ")
        ))
    })
}
