//! Which numbered rules of docs/spec/*.md each claim checks: the claim cites them in
//! claims.json (`rules`) and in the report. One table for every paper, so that a claim and the
//! rules it tests are read side by side; `every_claim_cites_rules_that_exist` keeps it true.

/// (claim id, the rules it checks).
const RULES: &[(&str, &[&str])] = &[
    // Che's approximation checks the web service's cache and workload (GWTW-R6).
    ("cache.C1", &["GWTW-R6"]),
    ("gwtw.C1-time", &["GWTW-R1", "GWTW-R3", "GWTW-R4"]),
    ("gwtw.C1", &["GWTW-R1", "GWTW-R3", "GWTW-R4", "GWTW-R8"]),
    ("gwtw.C1-quick", &["GWTW-R3", "GWTW-R4"]),
    ("gwtw.C1-winner", &["GWTW-R3"]),
    ("gwtw.C6-two-choice", &["GWTW-R1", "GWTW-R8"]),
    (
        "gwtw.C1-load",
        &["GWTW-R3", "GWTW-R4", "GWTW-R6", "GWTW-R8"],
    ),
    (
        "gwtw.C1-load-c1",
        &["GWTW-R3", "GWTW-R4", "GWTW-R6", "GWTW-R8"],
    ),
    ("gwtw.C1-whp", &["GWTW-R3", "GWTW-R4", "GWTW-R8"]),
    (
        "gwtw.C1-break",
        &["GWTW-R2", "GWTW-R3", "GWTW-R4", "GWTW-R6", "GWTW-R8"],
    ),
    ("gwtw.E9-load", &["GWTW-R2", "GWTW-R4"]),
    ("gwtw.C3", &["GWTW-R2", "GWTW-R3"]),
    ("gwtw.C3-slower", &["GWTW-R2", "GWTW-R3"]),
    ("gwtw.C3-failure", &["GWTW-R2", "GWTW-R4", "GWTW-R8"]),
    ("gwtw.C4", &["GWTW-R3", "GWTW-R6"]),
    ("gwtw.C4-control", &["GWTW-R1", "GWTW-R6"]),
    ("gwtw.C4-strict", &["GWTW-R6", "GWTW-R8"]),
    ("gwtw.F2-livelock", &["GWTW-R4", "GWTW-R8"]),
    ("gwtw.E5-collapse", &["GWTW-R3", "GWTW-R6", "GWTW-R8"]),
    ("gwtw.orient", &["GWTW-R8"]),
    ("gwtw.C5", &["GWTW-R5"]),
    ("gwtw.C5-c1", &["GWTW-R5"]),
    ("gwtw.E6-sweep", &["GWTW-R5"]),
    ("gwtw.C2", &["GWTW-R1", "GWTW-R6"]),
    ("gwtw.C2-video", &["GWTW-R1", "GWTW-R7"]),
    ("gwtw.C2-failure", &["GWTW-R1", "GWTW-R8"]),
    ("gwtw.k1-balls", &["GWTW-R1"]),
    ("gwtw.C1-video", &["GWTW-R7", "GWTW-R8"]),
    ("gwtw.E9", &["GWTW-R4", "GWTW-R8"]),
    ("gwtw.E9-main", &["GWTW-R4"]),
    ("gwtw.B1", &["GWTW-R8"]),
    // Prequal against P2C in the video model: the bit rate a server gives (GWTW-R7).
    ("gwtw.B2", &["GWTW-R7"]),
    // Steering (cdnlab's comparison): the seeds' designs are two of the policies compared,
    // GWTW by reported throughput (its trial and re-trial) and TP's shares with admission.
    ("steering.static-worst", &["TP-R8"]),
    ("steering.prequal-lowest", &["TP-R8", "GWTW-R3"]),
    ("steering.reaction", &["GWTW-R3", "GWTW-R4", "TP-R8"]),
    ("steering.tp-startup", &["TP-R4", "TP-R8"]),
    ("mh.rbs-uniform", &["MH-R3"]),
    ("mh.rbs-probes", &["MH-R3"]),
    ("mh.rbs-variance", &["MH-R3"]),
    ("mh.gap-single", &["MH-R3"]),
    ("mh.rgr-rounds", &["MH-R8"]),
    ("mh.gap-multi", &["MH-R3"]),
    ("mh.balance-gain", &["MH-R1", "MH-R4", "MH-R5"]),
    ("mh.steady-replicas", &["MH-R4", "MH-R5", "MH-R6"]),
    ("mh.steady-noise", &["MH-R4", "MH-R6"]),
    ("mh.flash-load", &["MH-R4", "MH-R5"]),
    ("mh.invariants", &["MH-R2", "MH-R5", "MH-R6", "MH-R7"]),
    ("mh.flash-growth", &["MH-R5"]),
    ("mh.flash-shrink", &["MH-R6"]),
    ("mh.gap-skew", &["MH-R3", "MH-R9"]),
    ("mh.failure-recursion", &["MH-R3", "MH-R9"]),
    ("mh.repair", &["MH-R8"]),
    ("mh.chord-hops", &["MH-R1"]),
    ("mh.x6-probes", &["MH-R3"]),
    ("mh.x6-replication", &["MH-R5"]),
    ("tp.gap", &["TP-R1", "TP-R2", "TP-R4", "TP-R5"]),
    ("tp.s4-lowest", &["TP-R4"]),
    ("tp.hops", &["TP-R1", "TP-R2"]),
    ("tp.gap-random", &["TP-R1", "TP-R2"]),
    ("tp.erlang", &["TP-R7"]),
    ("tp.reallocation", &["TP-R6"]),
    ("tp.reallocation-excess", &["TP-R6", "TP-R7"]),
    ("tp.multisource", &["TP-R5"]),
    ("tp.slack", &["TP-R4"]),
    ("tp.cluster-balance", &["TP-R5"]),
    ("tp.net-gap", &["TP-R1", "TP-R2", "TP-R4"]),
    ("tp.net-gap-predictor", &["TP-R1", "TP-R2", "TP-R4"]),
    ("tp.net-links", &["TP-R4", "TP-R5"]),
    ("tp.net-erlang", &["TP-R7"]),
    ("tp.net-reallocation-zones", &["TP-R6"]),
    ("tp.net-warm", &["TP-R2", "TP-R6"]),
    ("tp.solver-exact", &["TP-R2"]),
    ("tp.solver-faster", &["TP-R2"]),
    ("tp.vogel", &["TP-R2"]),
    ("tp.solver-warm", &["TP-R2", "TP-R6"]),
];

/// The rules claim `id` checks (none for an id the table does not know).
pub(crate) fn rules_of(id: &str) -> &'static [&'static str] {
    RULES
        .iter()
        .find(|(c, _)| *c == id)
        .map_or(&[], |(_, r)| *r)
}

/// Every claim id the table knows.
#[cfg(test)]
pub(crate) fn claim_ids() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|(c, _)| *c)
}
