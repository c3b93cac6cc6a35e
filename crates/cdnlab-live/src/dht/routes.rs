//! A DHT edge's HTTP routes: content by random binary search, the internal replica
//! endpoints (has, create, the replica itself), and `/metrics`.

use super::*;

pub(super) async fn content(
    State(s): State<Arc<DhtState>>,
    Path(f): Path<String>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let r = match parse_id(&f, None) {
        Err(_) => text(StatusCode::BAD_REQUEST, "file id: 1 to 20 decimal digits"),
        Ok(f) => {
            s.counters.lookups.fetch_add(1, Relaxed);
            let mut rng = s.next_rng();
            let mut search = RbsSearch::new(s.cfg.ring.k);
            let mut served = None;
            // Probes of this lookup, and those that asked another edge (a round trip each):
            // sent with the answer, for clients that measure latency against them.
            let (mut probes, mut remote) = (0u32, 0u32);
            while let Some(i) = search.next(&mut rng) {
                probes += 1;
                remote += u32::from(s.owner(f, i) != Some(s.cfg.id));
                if let Some(at) = s.probe_at(f, i).await {
                    served = Some((i, at));
                    break;
                }
                search.missed(i);
            }
            let mut r = match served {
                None => text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "no replica reachable; retry",
                ),
                Some((i, owner)) if owner == s.cfg.id => s.serve_local(f, i, &req).await,
                Some((i, owner)) => {
                    s.counters.redirects.fetch_add(1, Relaxed);
                    (
                        StatusCode::TEMPORARY_REDIRECT,
                        [(
                            header::LOCATION,
                            format!("http://{}/replica/{f}/{i}", s.addr(owner)),
                        )],
                    )
                        .into_response()
                }
            };
            let h = r.headers_mut();
            h.insert(PROBES, HeaderValue::from(probes));
            h.insert(REMOTE_PROBES, HeaderValue::from(remote));
            r
        }
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

pub(super) async fn replica(
    State(s): State<Arc<DhtState>>,
    Path((f, i)): Path<(String, String)>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    let r = match file_and_index(&s, &f, &i) {
        None => text(
            StatusCode::BAD_REQUEST,
            "file id and replica index (1 to K)",
        ),
        // Only the owner of h_1(f) fetches a home copy from the origin (so a scan of ids at
        // one edge fills nothing there); other replicas exist only if created, which takes the
        // secret.
        Some((f, 1)) if !s.held_here(f, 1) && s.owner(f, 1) != Some(s.cfg.id) => text(
            StatusCode::MISDIRECTED_REQUEST,
            "this edge does not own that file's home copy; ask /content/{file} at any edge",
        ),
        Some((f, i)) => s.serve_local(f, i, &req).await,
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

pub(super) async fn has(
    State(s): State<Arc<DhtState>>,
    h: HeaderMap,
    Path((f, i)): Path<(String, String)>,
) -> Response {
    if !s.authorised(&h) {
        return text(
            StatusCode::UNAUTHORIZED,
            "internal endpoint: the ring's secret is required",
        );
    }
    s.learn_down(&h);
    match file_and_index(&s, &f, &i) {
        None => text(
            StatusCode::BAD_REQUEST,
            "file id and replica index (1 to K)",
        ),
        Some((f, i)) if s.holds(f, i) && s.owner(f, i) == Some(s.cfg.id) => {
            text(StatusCode::OK, "yes")
        }
        Some(_) => text(StatusCode::NOT_FOUND, "no"),
    }
}

pub(super) async fn create(
    State(s): State<Arc<DhtState>>,
    h: HeaderMap,
    Path((f, i)): Path<(String, String)>,
) -> Response {
    if !s.authorised(&h) {
        return text(
            StatusCode::UNAUTHORIZED,
            "internal endpoint: the ring's secret is required",
        );
    }
    s.learn_down(&h);
    match file_and_index(&s, &f, &i) {
        None => text(
            StatusCode::BAD_REQUEST,
            "file id and replica index (1 to K)",
        ),
        Some((f, i)) if s.owner(f, i) != Some(s.cfg.id) => text(
            StatusCode::MISDIRECTED_REQUEST,
            "this edge does not own that replica's position",
        ),
        Some((f, i)) => match s.create_here(f, i).await {
            Ok((Created::New, ..)) => text(StatusCode::CREATED, "created"),
            Ok((Created::Exists, ..)) => text(StatusCode::OK, "exists"),
            Ok((Created::NoRoom, ..)) => text(
                StatusCode::INSUFFICIENT_STORAGE,
                "no room for another replica here",
            ),
            Err(missing) => missing.answer(),
        },
    }
}

pub(super) async fn metrics(State(s): State<Arc<DhtState>>) -> Response {
    let c = &s.counters;
    // Replicas held here per file (summed over the edges: replicas per file), for the files
    // with more than their home copy somewhere, i.e. an index above 1 here.
    let (held, per_file) = {
        let h = s.held.lock().expect("held lock");
        let mut per: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
        for &(f, _) in h.keys() {
            *per.entry(f).or_default() += 1;
        }
        let replicated: std::collections::BTreeSet<u64> =
            h.keys().filter(|k| k.1 > 1).map(|k| k.0).collect();
        per.retain(|f, _| replicated.contains(f));
        (h.len() as f64, per)
    };
    let bytes = s.held_bytes() as f64;
    let g = |a: &AtomicU64| a.load(Relaxed) as f64;
    let mut extra = vec![
        single(
            "cdnlab_dht_lookups_total",
            "Random binary searches run here.",
            Kind::COUNTER,
            g(&c.lookups),
        ),
        single(
            "cdnlab_dht_probes_total",
            "Probes made here (searches, replication, gap removal).",
            Kind::COUNTER,
            g(&c.probes),
        ),
        single(
            "cdnlab_dht_redirects_total",
            "Requests redirected to a replica on another edge.",
            Kind::COUNTER,
            g(&c.redirects),
        ),
        single(
            "cdnlab_dht_replications_total",
            "Replicas created on behalf of overloaded replicas here.",
            Kind::COUNTER,
            g(&c.replications),
        ),
        single(
            "cdnlab_dht_dereplications_total",
            "Top replicas that left this edge.",
            Kind::COUNTER,
            g(&c.dereplications),
        ),
        single(
            "cdnlab_dht_gaps_found_total",
            "Missing replicas found by random gap removal.",
            Kind::COUNTER,
            g(&c.gaps_found),
        ),
        single(
            "cdnlab_dht_gaps_filled_total",
            "Of those, refilled.",
            Kind::COUNTER,
            g(&c.gaps_filled),
        ),
        single(
            "cdnlab_dht_handovers_total",
            "Replicas handed over to an edge that came back.",
            Kind::COUNTER,
            g(&c.handovers),
        ),
        single(
            "cdnlab_dht_origin_fills_total",
            "Origin fetches to create replicas here.",
            Kind::COUNTER,
            g(&c.origin_fills),
        ),
        single(
            "cdnlab_dht_replicas_held",
            "Replicas held here.",
            Kind::GAUGE,
            held,
        ),
        single(
            "cdnlab_dht_held_bytes",
            "Bytes of the replicas held here (home copies and above).",
            Kind::GAUGE,
            bytes,
        ),
        single(
            "cdnlab_dht_capacity_bytes",
            "Capacity for home copies, and as much again for replicas above index 1.",
            Kind::GAUGE,
            s.cfg.capacity as f64,
        ),
    ];
    extra.push(family(
        "cdnlab_dht_file_replicas",
        "Replicas of a file held here (files with replicas beyond the home copy here); summed over the edges, replicas per file.",
        Kind::GAUGE,
        per_file
            .into_iter()
            .map(|(f, n)| (vec![("file", f.to_string())], n as f64)),
    ));
    metrics::response(s.metrics.render(extra))
}
