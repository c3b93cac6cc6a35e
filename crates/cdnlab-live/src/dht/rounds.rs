//! What a DHT edge does over time: the end of each counting window (replication and
//! de-replication by the library's rule, in its phase order), random gap removal, and the
//! health of edges that are down.

use super::*;

/// Windows, gap removal and the health of edges that are down, until stopped.
pub(super) async fn background(s: Arc<DhtState>, mut stopped: watch::Receiver<bool>) {
    let start = tokio::time::Instant::now();
    let (mut next_window, mut next_rgr, mut next_health) = (
        start + s.cfg.window,
        start + s.cfg.rgr_period,
        start + Duration::from_millis(500),
    );
    loop {
        let wake = next_window.min(next_rgr).min(next_health);
        tokio::select! {
            _ = tokio::time::sleep_until(wake) => {}
            _ = stopped.changed() => return,
        }
        let now = tokio::time::Instant::now();
        if now >= next_window {
            end_window(&s).await;
            next_window += s.cfg.window;
        }
        if now >= next_rgr {
            gap_removal(&s).await;
            next_rgr += s.cfg.rgr_period;
        }
        if now >= next_health {
            s.drain_expired();
            health(&s).await;
            next_health += Duration::from_millis(500);
        }
    }
}

/// Replication and de-replication from the window's counts, by the library's window-end rule
/// (`cdnlab::dht::replication`, growth one), as the simulator runs it
/// (`cdnlab::sim::multihash::window_end`), in the library's phase order
/// ([`Phase::ORDER`]: the overloaded replicas' searches and creations, then the others' leave
/// decisions). Replicas created during the window wait for a full one.
pub(super) async fn end_window(s: &DhtState) {
    let counts = window_counts(s);
    for phase in Phase::ORDER {
        let leaving = decide(s, &counts, phase).await;
        leave(s, &leaving);
    }
}

/// The replicas that decided to leave go.
pub(super) fn leave(s: &DhtState, leaving: &[(u64, u32)]) {
    let mut held = s.held.lock().expect("held lock");
    for &(f, i) in leaving {
        if s.drop_replica(&mut held, f, i) {
            s.counters.dereplications.fetch_add(1, Relaxed);
        }
    }
}

/// The window's counts of the replicas held here that lived through it (sorted), resetting them.
pub(super) fn window_counts(s: &DhtState) -> Vec<((u64, u32), f64)> {
    let mut held = s.held.lock().expect("held lock");
    let mut v: Vec<_> = held
        .iter_mut()
        .filter_map(|(&k, h)| {
            let count = std::mem::take(&mut h.count) as f64;
            std::mem::replace(&mut h.settled, true).then_some((k, count))
        })
        .collect();
    v.sort_unstable_by_key(|x| x.0);
    v
}

/// The window-end decisions of one phase's replicas: those that grow have their creations made;
/// those that leave are returned, to go after every decision (the decisions of one window are
/// concurrent, as in the simulator).
pub(super) async fn decide(
    s: &DhtState,
    counts: &[((u64, u32), f64)],
    phase: Phase,
) -> Vec<(u64, u32)> {
    let mut leaving = Vec::new();
    let rules = Rules {
        c_high: s.cfg.c_high,
        window: s.cfg.window.as_secs_f64(),
        gamma: s.cfg.gamma,
        k: s.cfg.ring.k,
        growth: Growth::One,
        place: Place::Smallest,
        leave: Leave::Top,
        search: Search::Gallop,
    };
    for &((f, i), count) in counts {
        let mut end = WindowEnd::new(rules, i, count);
        if !phase.decides(&end) {
            continue;
        }
        let action = loop {
            match end.step() {
                Action::Probe(j) => end.answer(s.probe(f, j).await),
                a => break a,
            }
        };
        match action {
            Action::Create(range) => {
                for j in range {
                    if s.create_at_owner(f, j).await {
                        s.counters.replications.fetch_add(1, Relaxed);
                    }
                }
            }
            Action::Leave => leaving.push((f, i)),
            Action::Probe(_) | Action::Done => {}
        }
    }
    leaving
}

/// Random gap removal, the library's round (`cdnlab::dht::repair::Round`) over the replicas of
/// each file held here: each replica i > 1 probes one uniform index below it; the missing ones
/// are refilled.
pub(super) async fn gap_removal(s: &DhtState) {
    let mut keys: Vec<(u64, u32)> = s.held.lock().expect("held lock").keys().copied().collect();
    keys.sort_unstable();
    let mut rng = s.next_rng();
    for file in keys.chunk_by(|a, b| a.0 == b.0) {
        let f = file[0].0;
        let held: Vec<u32> = file.iter().map(|&(_, i)| i).collect();
        let mut round = repair::Round::new(&held, repair::Probe::Random);
        while let Some(j) = round.next(&mut rng) {
            let present = s.probe(f, j).await;
            round.answer(present);
        }
        for j in round.missing() {
            s.counters.gaps_found.fetch_add(1, Relaxed);
            if s.create_at_owner(f, j).await {
                s.counters.gaps_filled.fetch_add(1, Relaxed);
            }
        }
    }
}

/// Edges that are down in this view: back if /health answers; then hand over the replicas
/// whose positions are theirs again.
pub(super) async fn health(s: &DhtState) {
    let down: Vec<u32> = {
        let v = s.view.lock().expect("view lock");
        (0..v.nodes()).filter(|&n| !v.is_alive(n)).collect()
    };
    for n in down {
        let ok = s
            .client
            .get(format!("http://{}/health", s.addr(n)))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if !ok {
            continue;
        }
        let _ = s.view.lock().expect("view lock").revive(n);
        let moving: Vec<(u64, u32)> = {
            let held = s.held.lock().expect("held lock");
            let mut v: Vec<_> = held
                .keys()
                .copied()
                .filter(|&(f, i)| s.owner(f, i) != Some(s.cfg.id))
                .collect();
            v.sort_unstable();
            v
        };
        for (f, i) in moving {
            if s.create_at_owner(f, i).await || s.probe(f, i).await {
                s.drop_replica(&mut s.held.lock().expect("held lock"), f, i);
                s.counters.handovers.fetch_add(1, Relaxed);
            }
        }
    }
}
