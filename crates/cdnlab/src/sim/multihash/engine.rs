//! The request loop of one run: arrivals, random binary search over the store, window ends
//! and repair rounds, failures, and the counters an [`Outcome`] reports.

use super::*;

/// Run state.
pub(super) struct Sim<'a> {
    pub(super) cfg: &'a Config,
    pub(super) ring: Ring,
    pub(super) store: Store,
    /// The baseline's placement (`None` for multi-hash).
    pub(super) placement: Option<Box<dyn Placement>>,
    /// Files requested this window (each once), for the end-of-window pass.
    pub(super) touched: Vec<u32>,
    /// Scratch of that pass.
    pub(super) scratch: Scratch,
    /// Requests per node this window and over the measured windows.
    pub(super) node_load: Vec<u32>,
    pub(super) measured_load: Vec<u64>,
    pub(super) window_requests: u64,
    /// Reported gaps (file, index) for request-driven repair.
    pub(super) reported: Vec<(u32, u32)>,
    /// Files a request found no replica of this window: the origin restores their home copy
    /// at the window's end.
    pub(super) from_origin: Vec<u32>,
    pub(super) probes: u64,
    pub(super) failures: u64,
    pub(super) replication_messages: u64,
    pub(super) created: u64,
    pub(super) repair_messages: u64,
    pub(super) repair_rounds: u64,
    /// X6's references (see [`Outcome::probes_expected`]): RBS's probe mean and variance for a
    /// prefix 1..n (element n; 0 acts as 1), the recursion's for files with gaps this window,
    /// and the sums over requests, replications and repair rounds.
    pub(super) prefix_moments: Vec<(f64, f64)>,
    pub(super) gapped_moments: HashMap<u32, (f64, f64)>,
    pub(super) probe_moments: (f64, f64),
    pub(super) replication_formula: u64,
    pub(super) repair_formula: u64,
    pub(super) create_refused: u64,
}

impl Sim<'_> {
    /// Serves one request for file `f`.
    pub(super) fn request(&mut self, f: u32, rng: &mut Rng) -> bool {
        let cfg = self.cfg;
        let node = match self.placement.as_mut() {
            None => {
                let key = file_key(u64::from(f));
                let top = self.store.top(f);
                let report = cfg.repair == Repair::Request;
                let mut hit = None;
                let (store, ring, reported) = (&self.store, &self.ring, &mut self.reported);
                let l = search::lookup(cfg.strategy, cfg.k, top, rng, |i| {
                    // Nothing is held above the top replica, where most of RBS's probes land
                    // (K = 1024 against a handful held): a miss without a lookup.
                    if i > top {
                        return false;
                    }
                    match store.probe(ring, key, f, i) {
                        Some(h) => {
                            hit = Some(h);
                            true
                        }
                        None => {
                            if report && i < top {
                                reported.push((f, i));
                            }
                            false
                        }
                    }
                });
                self.probes += u64::from(l.probes);
                if cfg.strategy == Strategy::Rbs {
                    let (m, v) = self.moments(f);
                    self.probe_moments.0 += m;
                    self.probe_moments.1 += v;
                }
                match (l.served, hit) {
                    (Some(_), Some((node, slot))) => {
                        // The file's first request this window (all counts still 0; they sit
                        // in the line just read, where a separate flag array would miss).
                        if self.store.replicas(f).iter().all(|r| r.count == 0) {
                            self.touched.push(f);
                        }
                        *self.store.count_mut(f, slot) += 1;
                        Some(node)
                    }
                    _ => {
                        self.from_origin.push(f);
                        None
                    }
                }
            }
            Some(place) => {
                self.probes += 1;
                let node = place.node(
                    &self.ring,
                    u64::from(f),
                    &self.node_load,
                    self.window_requests,
                );
                if place.stores_home() {
                    node.filter(|&n| self.store.holds(f, 1, n))
                } else {
                    node
                }
            }
        };
        self.window_requests += 1;
        match node {
            Some(n) => {
                self.node_load[n as usize] += 1;
                true
            }
            None => {
                self.failures += 1;
                false
            }
        }
    }

    /// RBS's probe mean and variance for a request of `f` in the current state.
    pub(super) fn moments(&mut self, f: u32) -> (f64, f64) {
        if self.store.gaps(f) == 0 {
            return self.prefix_moments[self.store.top(f) as usize];
        }
        let (store, k) = (&self.store, self.cfg.k as usize);
        *self.gapped_moments.entry(f).or_insert_with(|| {
            let mut used = vec![false; k];
            store
                .replicas(f)
                .iter()
                .for_each(|r| used[r.index as usize - 1] = true);
            analysis::probe_moments_with(&used)
        })
    }

    /// Replication and de-replication from this window's counts (see [`window_end`]).
    pub(super) fn adapt(&mut self) {
        let cfg = self.cfg;
        let rules = Rules {
            c_high: cfg.c_high,
            window: cfg.window,
            gamma: cfg.gamma,
            k: cfg.k,
            growth: cfg.growth,
            place: cfg.place,
            leave: cfg.leave,
            search: cfg.search,
        };
        let mut touched = std::mem::take(&mut self.touched);
        let mut scratch = std::mem::take(&mut self.scratch);
        touched.sort_unstable();
        for &f in &touched {
            let w = window_end(
                &mut self.store,
                &self.ring,
                rules,
                cfg.shrink,
                f,
                &mut scratch,
            );
            self.replication_messages += w.messages;
            self.replication_formula += w.formula;
            self.created += w.created;
            self.create_refused += w.refused;
        }
        self.touched = touched;
        self.touched.clear();
        self.scratch = scratch;
    }

    /// The origin restores the home copy of every file a request could not find.
    pub(super) fn origin_fill(&mut self) {
        let mut files = std::mem::take(&mut self.from_origin);
        files.sort_unstable();
        files.dedup();
        for &f in &files {
            self.store.create_if_absent(&self.ring, f, 1);
        }
        self.from_origin = files;
        self.from_origin.clear();
    }

    /// One round of repair.
    pub(super) fn repair(&mut self, rng: &mut Rng) {
        let cfg = self.cfg;
        match cfg.repair {
            Repair::None => {}
            Repair::Request => {
                let mut r = std::mem::take(&mut self.reported);
                r.sort_unstable();
                r.dedup();
                for &(f, i) in &r {
                    if i < self.store.top(f) {
                        self.repair_messages += 1;
                        self.repair_formula += 1;
                        self.store.create_if_absent(&self.ring, f, i);
                    }
                }
                self.repair_rounds += 1;
                self.reported = r;
                self.reported.clear();
            }
            Repair::Rgr | Repair::Neighbour | Repair::Migrate => {
                // The spec's cost: one probe per replica above the home, counted from the
                // store's totals, plus one message per refill (added below).
                let homes = (0..self.store.files() as u32)
                    .filter(|&f| self.store.replicas(f).first().is_some_and(|r| r.index == 1))
                    .count() as u64;
                self.repair_formula += self.store.total() - homes;
                for f in 0..self.store.files() as u32 {
                    if self.store.gaps(f) == 0 {
                        // Probes still cost messages, but find nothing to do.
                        let n = self
                            .store
                            .replicas(f)
                            .iter()
                            .filter(|r| r.index > 1)
                            .count();
                        self.repair_messages += n as u64;
                        continue;
                    }
                    let key = file_key(u64::from(f));
                    let holders: Vec<u32> =
                        self.store.replicas(f).iter().map(|r| r.index).collect();
                    let probe = if cfg.repair == Repair::Neighbour {
                        repair::Probe::Neighbour
                    } else {
                        repair::Probe::Random
                    };
                    // Probes against the state at the round's start.
                    let mut missing: Vec<u32> = Vec::new();
                    let (store, ring) = (&self.store, &self.ring);
                    self.repair_messages += repair::round(
                        &holders,
                        probe,
                        rng,
                        |j| store.probe(ring, key, f, j).is_some(),
                        &mut missing,
                    );
                    for j in missing {
                        self.repair_messages += 1;
                        self.repair_formula += 1;
                        if cfg.repair == Repair::Migrate && self.store.top(f) > j {
                            let top = self.store.top(f);
                            self.store.remove(f, top);
                        }
                        self.store.create_if_absent(&self.ring, f, j);
                    }
                }
                self.repair_rounds += 1;
            }
        }
    }

    pub(super) fn total_gaps(&self) -> u64 {
        (0..self.store.files() as u32)
            .map(|f| u64::from(self.store.gaps(f)))
            .sum()
    }
}
