//! Replication over time: what a replica does at the end of a counting window (replicate,
//! leave as the top, or nothing), as a step machine in the style of [`UnusedSearch`]: it names
//! the probes it needs and the simulator answers them from its store, the live edges over
//! HTTP. Written once; `sim::multihash` and `cdnlab-live`'s DHT edges both drive it.
//!
//! The rules (spec: overload detection is local; replication to the smallest unused index by
//! CREATE_IF_ABSENT; only the top replica may delete itself, index 1 never), read so that a
//! replica needs nothing but its own index, its own count and probes:
//! - a replica that served more than `threshold` = c_high W requests in the window is
//!   overloaded: it searches for the smallest unused index u above its own (gallop then bisect)
//!   and asks for the indices its growth rule names, from u up ([`Growth`]);
//! - otherwise a replica i > 1 whose load the others could take (i.e. count x i / (i - 1) <
//!   gamma x threshold, [`search::top_may_leave`] with n = i: its index is the count of a
//!   prefix) checks that it is the top by galloping up, probing i + 1, i + 2, i + 4, ... and
//!   k: it leaves only if none of them is used. With the prefix invariant the first probe
//!   decides; after crashes a replica just below a gap still sees the replicas above the gap
//!   (unless every gallop point is missing too), so it does not leave and widen the gap. Run
//!   after the window's replications, a file that is still overloaded somewhere has gained
//!   index i + 1, so its top stays.
//!
//! Rules: MH-R4, MH-R5, MH-R6 and MH-R7 of docs/spec/multihash.md.

use super::analysis;
use super::search::{self, Step, UnusedSearch};

crate::registry! {
    /// How many replicas an overload adds.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Growth: "growth rule" {
        /// One per window (the smallest unused index).
        One => "one",
        /// Doubling: n + 1 ..= 2n (every overloaded replica asks for the same indices, and the
        /// arbiters create each once).
        Double => "double",
        /// Straight to ceil(lambda_hat / c_high), lambda_hat = observed rate x n.
        Jump => "jump",
    }
}

crate::registry! {
    /// Where an overloaded replica's new replicas go.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Place: "placement rule" {
        /// At the smallest unused index and up (MH-R5: the used indices stay a prefix).
        Smallest => "smallest",
        /// A wrong model, not the paper's: the same number of indices from a pseudo-random
        /// start in u..=k (u the smallest unused index), drawn from a hash of u and the replica's
        /// count, so the step machine needs no generator. Used indices stop being a
        /// prefix, which random binary search assumes (docs/claims.md, "Wrong models").
        Random => "random",
    }
}

crate::registry! {
    /// Which replica may leave when the others could take its load.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Leave: "leave rule" {
        /// Only the top replica, checked by galloping up (MH-R7).
        Top => "top",
        /// A wrong model, not the paper's: any replica above index 1 leaves without checking
        /// that it is the top, so a middle replica leaves a gap (docs/claims.md, "Wrong
        /// models").
        Any => "any",
    }
}

crate::registry! {
    /// How an overloaded replica finds the smallest unused index above its own.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Search: "unused-index search" {
        /// Gallop up, then bisect (MH-R5).
        Gallop => "gallop",
        /// A wrong model, not the paper's: one index at a time up from its own
        /// ([`UnusedSearch::linear`]; docs/claims.md, "Wrong models").
        Linear => "linear",
    }
}

/// The parameters of the window-end rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    /// Requests per time unit a replica takes before it is overloaded, and the counting window
    /// in time units: the threshold is c_high x W requests per window.
    pub c_high: f64,
    pub window: f64,
    /// De-replication hysteresis, in (0, 1).
    pub gamma: f64,
    /// The hash functions: indices 1..=k.
    pub k: u32,
    pub growth: Growth,
    pub place: Place,
    pub leave: Leave,
    pub search: Search,
}

impl Rules {
    /// Requests per window above which a replica is overloaded, c_high x W.
    pub fn threshold(&self) -> f64 {
        self.c_high * self.window
    }

    /// The indices an overloaded replica with `count` requests asks for, given the smallest
    /// unused index `u` (so n = u - 1 replicas): `u..=last`.
    pub fn targets(&self, u: u32, count: f64) -> std::ops::RangeInclusive<u32> {
        let n = u - 1;
        let last = match self.growth {
            Growth::One => u,
            Growth::Double => (2 * n).max(u),
            Growth::Jump => {
                // lambda_hat = the replica's observed rate times n.
                analysis::steady_replicas(count / self.window * f64::from(n), self.c_high)
            }
        };
        let range = u..=last.min(self.k).max(u);
        match self.place {
            Place::Smallest => range,
            Place::Random => {
                let span = range.end() - range.start();
                let h = xxhash_rust::xxh64::xxh64(&count.to_bits().to_le_bytes(), u64::from(u));
                let start = u + (h % u64::from(self.k - span - u + 1)) as u32;
                start..=start + span
            }
        }
    }
}

/// The phases of one window's end, in the order they run: every overloaded replica decides
/// and the replicas it asks for are created ([`Phase::Grow`]); then every other replica decides
/// whether it leaves, and those that do leave after every decision ([`Phase::Shrink`]).
/// Growth runs first so that a file still overloaded somewhere has gained its next index
/// before its top decides, and the top then stays. Both drivers (the simulator's
/// `sim::multihash::window_end` and the live edges) iterate [`Phase::ORDER`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Grow,
    Shrink,
}

impl Phase {
    /// The phases in the order a window's end runs them.
    pub const ORDER: [Phase; 2] = [Phase::Grow, Phase::Shrink];

    /// Whether the replica whose window ended as `end` decides in this phase: the overloaded
    /// ones grow, the others may shrink.
    pub fn decides(self, end: &WindowEnd) -> bool {
        end.overloaded() == (self == Phase::Grow)
    }
}

/// What a [`WindowEnd`] wants next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Probe this index and report with [`WindowEnd::answer`].
    Probe(u32),
    /// Send CREATE_IF_ABSENT for these indices (to their owners, the arbiters); then done.
    Create(std::ops::RangeInclusive<u32>),
    /// Delete this replica (it is the top and the others can take its load); then done.
    Leave,
    /// Nothing (more) to do.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Search(UnusedSearch),
    /// Galloping up from the index: the step of the probe pending (i + step, capped at k).
    Top(u32),
    Finished,
}

/// One replica's decision at the end of a window, one probe at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowEnd {
    rules: Rules,
    index: u32,
    count: f64,
    stage: Stage,
    leave: bool,
}

impl WindowEnd {
    /// The decision of replica `index` (1..=k) that served `count` requests in the window.
    pub fn new(rules: Rules, index: u32, count: f64) -> Self {
        let threshold = rules.threshold();
        let (stage, leave) = if search::overloaded(count, threshold) {
            let search = match rules.search {
                Search::Gallop => UnusedSearch::new(index, rules.k),
                Search::Linear => UnusedSearch::linear(index, rules.k),
            };
            (Stage::Search(search), false)
        } else if index > 1 && search::top_may_leave(count, index, rules.gamma, threshold) {
            // The top, if nothing is above it; index k has nothing above it by definition.
            if index == rules.k || rules.leave == Leave::Any {
                (Stage::Finished, true)
            } else {
                (Stage::Top(1), false)
            }
        } else {
            (Stage::Finished, false)
        };
        WindowEnd {
            rules,
            index,
            count,
            stage,
            leave,
        }
    }

    /// Whether the replica is overloaded (it will replicate rather than leave).
    pub fn overloaded(&self) -> bool {
        search::overloaded(self.count, self.rules.threshold())
    }

    /// The next action.
    pub fn step(&mut self) -> Action {
        match &mut self.stage {
            Stage::Search(s) => match s.step() {
                Step::Probe(j) => Action::Probe(j),
                Step::Done(found) => {
                    self.stage = Stage::Finished;
                    match found {
                        Some(u) => Action::Create(self.rules.targets(u, self.count)),
                        None => Action::Done,
                    }
                }
            },
            Stage::Top(step) => Action::Probe(self.index.saturating_add(*step).min(self.rules.k)),
            Stage::Finished if self.leave => {
                self.leave = false;
                Action::Leave
            }
            Stage::Finished => Action::Done,
        }
    }

    /// Whether the index of the last [`Action::Probe`] is used.
    pub fn answer(&mut self, present: bool) {
        match &mut self.stage {
            Stage::Search(s) => s.answer(present),
            Stage::Top(step) => {
                let probed = self.index.saturating_add(*step).min(self.rules.k);
                if present {
                    self.stage = Stage::Finished;
                } else if probed == self.rules.k {
                    self.stage = Stage::Finished;
                    self.leave = true;
                } else {
                    *step = step.saturating_mul(2);
                }
            }
            Stage::Finished => {}
        }
    }

    /// Runs the decision against synchronous probes (`present(j)`: is index j used?): the
    /// final action (Create, Leave or Done) and the probes made.
    pub fn run(mut self, mut present: impl FnMut(u32) -> bool) -> (Action, u32) {
        let mut probes = 0;
        loop {
            match self.step() {
                Action::Probe(j) => {
                    probes += 1;
                    self.answer(present(j));
                }
                a => return (a, probes),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Growth comes first, and every replica decides in exactly one phase: the overloaded in
    /// Grow, the others in Shrink (the drivers rely on both).
    #[test]
    fn phases_grow_then_shrink_and_partition_the_replicas() {
        assert_eq!(Phase::ORDER, [Phase::Grow, Phase::Shrink]);
        let rules = Rules {
            c_high: 2.0,
            window: 10.0,
            gamma: 0.5,
            k: 8,
            growth: Growth::One,
            place: Place::Smallest,
            leave: Leave::Top,
            search: Search::Gallop,
        };
        for count in [0.0, 5.0, 19.0, 20.0, 21.0, 100.0] {
            for i in 1..=8 {
                let end = WindowEnd::new(rules, i, count);
                let deciding: Vec<Phase> = Phase::ORDER
                    .into_iter()
                    .filter(|p| p.decides(&end))
                    .collect();
                let want = if count > 20.0 {
                    Phase::Grow
                } else {
                    Phase::Shrink
                };
                assert_eq!(deciding, [want], "index {i}, count {count}");
            }
        }
    }

    fn rules(growth: Growth) -> Rules {
        Rules {
            c_high: 0.5,
            window: 200.0,
            gamma: 0.75,
            k: 64,
            growth,
            place: Place::Smallest,
            leave: Leave::Top,
            search: Search::Gallop,
        }
    }

    /// The wrong models break the prefix where the rules keep it: with `Leave::Any` a middle
    /// replica (3 of 5, lightly loaded) leaves without probing, where the top rule sees 5
    /// above it and stays; with `Place::Random` an overloaded replica asks for indices above
    /// the smallest unused one (for most counts), always as many and within u..=k.
    #[test]
    fn wrong_rules_leave_gaps() {
        let prefix = |n: u32| move |j: u32| j <= n;
        let top = rules(Growth::One);
        assert_eq!(WindowEnd::new(top, 3, 10.0).run(prefix(5)).0, Action::Done);
        let any = Rules {
            leave: Leave::Any,
            search: Search::Gallop,
            ..top
        };
        assert_eq!(
            WindowEnd::new(any, 3, 10.0).run(prefix(5)),
            (Action::Leave, 0)
        );
        assert_eq!(WindowEnd::new(any, 1, 0.0).run(prefix(5)).0, Action::Done);
        let random = Rules {
            place: Place::Random,
            ..rules(Growth::Double)
        };
        let ranges: Vec<_> = (0..50)
            .map(|c| random.targets(6, 150.0 + f64::from(c)))
            .collect();
        for r in &ranges {
            assert_eq!(r.end() - r.start(), 4, "{r:?}");
            assert!(*r.start() >= 6 && *r.end() <= 64, "{r:?}");
        }
        assert!(ranges.iter().filter(|r| *r.start() > 6).count() > 40);
    }

    /// Overloaded replicas replicate to the smallest unused index by the growth rule, with the
    /// search's probes; the top leaves only when nothing is above it and the others can take
    /// its load; index 1 never leaves.
    #[test]
    fn window_end_decisions() {
        let prefix = |n: u32| move |j: u32| j <= n;
        // Replica 3 of 5, overloaded: one replica, the sixth.
        let (a, p) = WindowEnd::new(rules(Growth::One), 3, 150.0).run(prefix(5));
        assert_eq!(a, Action::Create(6..=6));
        assert_eq!(Some(p), analysis::unused_search_probes(3, 5, 64));
        assert_eq!(
            WindowEnd::new(rules(Growth::Double), 3, 150.0)
                .run(prefix(5))
                .0,
            Action::Create(6..=10)
        );
        // Jump: 150 requests x 5 replicas / 100 = 7.5, so 8 replicas.
        assert_eq!(
            WindowEnd::new(rules(Growth::Jump), 3, 150.0)
                .run(prefix(5))
                .0,
            Action::Create(6..=8)
        );
        // Capped at k.
        assert_eq!(
            WindowEnd::new(rules(Growth::Double), 40, 150.0)
                .run(prefix(40))
                .0,
            Action::Create(41..=64)
        );
        // All k used: nothing to create.
        assert_eq!(
            WindowEnd::new(rules(Growth::One), 64, 150.0)
                .run(prefix(64))
                .0,
            Action::Done
        );
        // The top of 5 with 10 requests: 10 x 5 / 4 < 75, it leaves after galloping over
        // 6, 7, 9, 13, 21, 37 and 64.
        assert_eq!(
            WindowEnd::new(rules(Growth::One), 5, 10.0).run(prefix(5)),
            (Action::Leave, 7)
        );
        // Below a gap (4 missing, 5 and 6 held), 3 is not the top: the gallop sees 5.
        let held = |j: u32| [1, 2, 3, 5, 6].contains(&j);
        assert_eq!(
            WindowEnd::new(rules(Growth::One), 3, 10.0).run(held),
            (Action::Done, 2)
        );
        // Not the top: 6 exists.
        assert_eq!(
            WindowEnd::new(rules(Growth::One), 5, 10.0).run(prefix(6)).0,
            Action::Done
        );
        // Too loaded to leave (70 x 5 / 4 = 87.5 >= 75), not overloaded: nothing, no probe.
        assert_eq!(
            WindowEnd::new(rules(Growth::One), 5, 70.0).run(prefix(5)),
            (Action::Done, 0)
        );
        // Index 1 never leaves.
        assert_eq!(
            WindowEnd::new(rules(Growth::One), 1, 0.0).run(prefix(1)),
            (Action::Done, 0)
        );
        // Index k leaves without a probe.
        assert_eq!(
            WindowEnd::new(rules(Growth::One), 64, 0.0).run(prefix(64)),
            (Action::Leave, 0)
        );
    }
}
