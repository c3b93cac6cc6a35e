//! A DHT edge's replicas: what it holds, probes of other edges (RBS over HTTP), creations
//! at the arbiter, hand-over, and the randomness of its decisions.

use super::*;

impl DhtState {
    pub(super) fn addr(&self, node: u32) -> SocketAddr {
        self.cfg.ring.edges[node as usize]
    }

    /// The edge owning replica i of f in this edge's view.
    pub(super) fn owner(&self, f: u64, i: u32) -> Option<u32> {
        self.view.lock().expect("view lock").owner(position(f, i))
    }

    /// Bytes of the replicas held here.
    pub(super) fn held_bytes(&self) -> u64 {
        let held = self.held.lock().expect("held lock");
        held.values().map(|h| h.bytes.len() as u64).sum()
    }

    /// Whether replica i of f is held here now (a home copy may be evicted).
    pub(super) fn held_here(&self, f: u64, i: u32) -> bool {
        self.held.lock().expect("held lock").contains_key(&(f, i))
    }

    pub(super) fn holds(&self, f: u64, i: u32) -> bool {
        i == 1 || self.held.lock().expect("held lock").contains_key(&(f, i))
    }

    /// Whether replica i of f exists (one probe).
    pub(super) async fn probe(&self, f: u64, i: u32) -> bool {
        self.probe_at(f, i).await.is_some()
    }

    /// The edge that holds replica i of f, if it exists (one probe). An owner that refuses the
    /// connection is taken off the view and the probe asks the position's new owner. The
    /// answer names the edge that said yes, not the owner in the view afterwards: the view may
    /// change meanwhile (an edge back), and a redirect must go where the replica is.
    pub(super) async fn probe_at(&self, f: u64, i: u32) -> Option<u32> {
        self.counters.probes.fetch_add(1, Relaxed);
        for _ in 0..self.cfg.ring.edges.len() {
            let owner = self.owner(f, i)?;
            if owner == self.cfg.id {
                return self.holds(f, i).then_some(owner);
            }
            let url = format!("http://{}/internal/has/{f}/{i}", self.addr(owner));
            match self
                .client
                .get(url)
                .header(SECRET, &self.cfg.ring.secret)
                .header(DOWN, self.down_list())
                .send()
                .await
            {
                Ok(r) => return (r.status() == reqwest::StatusCode::OK).then_some(owner),
                Err(e) if e.is_connect() => self.mark_down(owner),
                Err(_) => return None, // slow or confused: treated as a miss
            }
        }
        None
    }

    /// The edges down in this edge's view, for the [`DOWN`] header of its internal calls.
    pub(super) fn down_list(&self) -> String {
        let v = self.view.lock().expect("view lock");
        let down: Vec<String> = (0..v.nodes())
            .filter(|&n| !v.is_alive(n))
            .map(|n| n.to_string())
            .collect();
        down.join(",")
    }

    /// Takes the edges an authenticated ring member found down into this edge's view, so
    /// that it accepts the positions that are now its own (a killed home owner's files are
    /// served at the first request that finds the owner gone, not when a request happens to
    /// enter at the successor). The health check brings back any that are up.
    pub(super) fn learn_down(&self, h: &HeaderMap) {
        let Some(list) = h.get(DOWN).and_then(|v| v.to_str().ok()) else {
            return;
        };
        let n = self.cfg.ring.edges.len();
        for id in list.split(',').take(n) {
            if let Ok(id) = id.trim().parse::<u32>()
                && (id as usize) < n
                && id != self.cfg.id
            {
                self.mark_down(id);
            }
        }
    }

    pub(super) fn mark_down(&self, node: u32) {
        let mut v = self.view.lock().expect("view lock");
        if v.is_alive(node) && v.live() > 1 {
            let _ = v.crash(node);
        }
    }

    /// Creates replica i of f at its owner (CREATE_IF_ABSENT); true if this call created it.
    pub(super) async fn create_at_owner(&self, f: u64, i: u32) -> bool {
        for _ in 0..self.cfg.ring.edges.len() {
            let Some(owner) = self.owner(f, i) else {
                return false;
            };
            if owner == self.cfg.id {
                return matches!(self.create_here(f, i).await, Ok((Created::New, ..)));
            }
            let url = format!("http://{}/internal/create/{f}/{i}", self.addr(owner));
            match self
                .client
                .post(url)
                .header(SECRET, &self.cfg.ring.secret)
                .header(DOWN, self.down_list())
                .send()
                .await
            {
                Ok(r) if r.status().is_success() => {
                    return r.status() == reqwest::StatusCode::CREATED;
                }
                Ok(r) => {
                    REPLICATION.warn(format!(
                        "replica {i} of file {f} at edge {owner}: answered {}",
                        r.status()
                    ));
                    return false;
                }
                Err(e) if e.is_connect() => self.mark_down(owner),
                Err(e) => {
                    REPLICATION.warn(format!(
                        "replica {i} of file {f} at edge {owner}: {}",
                        warn::cause(&e)
                    ));
                    return false;
                }
            }
        }
        false
    }

    /// CREATE_IF_ABSENT here, with the replica's bytes, or why the origin did not give them.
    /// Concurrent calls for one replica share one origin fetch.
    pub(super) async fn create_here(
        &self,
        f: u64,
        i: u32,
    ) -> Result<(Created, Bytes, Arc<Validators>), Missing> {
        if let Some(h) = self.held.lock().expect("held lock").get(&(f, i)) {
            return Ok((Created::Exists, h.bytes.clone(), h.validators.clone()));
        }
        // The fetch stores the replica before its result is out, so every call that shares
        // it sees the same outcome.
        let mut flight = self.creating.join((f, i));
        let (bytes, validators, stored) = flight
            .result(|| async {
                let (bytes, validators) = self.fetch_origin(f).await?;
                let mut held = self.held.lock().expect("held lock");
                let stored = if held.contains_key(&(f, i)) {
                    Stored::Already
                } else if self.admit(&mut held, f, i, bytes.len()) {
                    held.insert(
                        (f, i),
                        Held {
                            bytes: bytes.clone(),
                            validators: validators.clone(),
                            count: 0,
                            settled: false,
                        },
                    );
                    Stored::Now
                } else {
                    Stored::NoRoom
                };
                Ok((bytes, validators, stored))
            })
            .await?;
        let created = match (stored, flight.ran()) {
            (Stored::Now, true) => Created::New,
            (Stored::Now | Stored::Already, _) => Created::Exists,
            (Stored::NoRoom, _) => Created::NoRoom,
        };
        Ok((created, bytes, validators))
    }

    /// Takes room for a new replica i of f of `size` bytes, evicting home copies as the home
    /// cache's policy says; false if there is none (`held` is locked by the caller).
    pub(super) fn admit(
        &self,
        held: &mut HashMap<(u64, u32), Held>,
        f: u64,
        i: u32,
        size: usize,
    ) -> bool {
        let mut b = self.budget.lock().expect("budget lock");
        if i > 1 {
            let cost = u64::from(crate::edge::charged(size));
            let fits = b.above + cost <= self.cfg.capacity;
            if fits {
                b.above += cost;
            }
            return fits;
        }
        let b = &mut *b;
        b.home.access(f, crate::edge::charged(size));
        b.home.drain_evictions(&mut b.evicted);
        for e in b.evicted.drain(..) {
            held.remove(&(e, 1));
        }
        b.home.contains(f)
    }

    /// Gives back the room of a replica that left (home copies stay in the cache's accounting
    /// until it evicts them).
    pub(super) fn release(&self, i: u32, size: usize) {
        if i > 1 {
            let mut b = self.budget.lock().expect("budget lock");
            b.above = b
                .above
                .saturating_sub(u64::from(crate::edge::charged(size)));
        }
    }

    pub(super) async fn fetch_origin(&self, f: u64) -> Result<(Bytes, Arc<Validators>), Missing> {
        self.counters.origin_fills.fetch_add(1, Relaxed);
        let r = match self
            .client
            .get(format!("http://{}/content/{f}", self.cfg.origin))
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => {
                ORIGIN.warn(format!("file {f}: {}", warn::cause(&e)));
                return Err(Missing::Failed);
            }
        };
        if r.status() != reqwest::StatusCode::OK {
            // A file the origin does not have is the client's mistake, not a failure.
            if r.status() == reqwest::StatusCode::NOT_FOUND {
                return Err(Missing::NotFound);
            }
            ORIGIN.warn(format!("file {f}: answered {}", r.status()));
            return Err(Missing::Failed);
        }
        let validators = Arc::new(Validators::from_headers(r.headers()));
        let bytes = crate::edge::read_body(r)
            .await
            .map_err(|_| Missing::Failed)?;
        Ok((bytes, validators))
    }

    /// Serves replica i of f from here, filling the home copy from the origin on demand (and
    /// keeping it if the home cache takes it).
    pub(super) async fn serve_local(&self, f: u64, i: u32, req: &HeaderMap) -> Response {
        let found = {
            let mut held = self.held.lock().expect("held lock");
            held.get_mut(&(f, i)).map(|h| {
                h.count += 1;
                (h.bytes.clone(), h.validators.clone())
            })
        };
        let (bytes, validators) = match found {
            Some(b) => {
                if i == 1 {
                    // A hit on the home copy: the cache's policy sees it.
                    let mut budget = self.budget.lock().expect("budget lock");
                    budget.home.access(f, crate::edge::charged(b.0.len()));
                }
                b
            }
            None if i == 1 => match self.create_here(f, 1).await {
                Err(missing) => return missing.answer(),
                Ok((_, b, v)) => {
                    if let Some(h) = self.held.lock().expect("held lock").get_mut(&(f, 1)) {
                        h.count += 1;
                    }
                    (b, v)
                }
            },
            None => match self.draining.lock().expect("draining lock").get(&(f, i)) {
                Some((b, v, t)) if t.elapsed() < self.cfg.timeout => (b.clone(), v.clone()),
                _ => return text(StatusCode::NOT_FOUND, "no such replica here"),
            },
        };
        // Conditional and range requests (RFC 9110), on the origin's validators.
        let (status, mut headers, part) = http::answer(req, &validators, &bytes);
        self.metrics.bytes_sent.inc_by(part.len() as u64);
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
        headers.insert(
            HeaderName::from_static("x-cdnlab-replica"),
            HeaderValue::from(i),
        );
        (status, headers, part).into_response()
    }

    /// Replica i of f leaves here: it stops counting against the capacity and being
    /// advertised, and answers redirects already sent for `cfg.timeout` (the drained ones that
    /// are older go now).
    pub(super) fn drop_replica(
        &self,
        held: &mut HashMap<(u64, u32), Held>,
        f: u64,
        i: u32,
    ) -> bool {
        let Some(h) = held.remove(&(f, i)) else {
            return false;
        };
        self.release(i, h.bytes.len());
        self.drain_expired();
        let mut draining = self.draining.lock().expect("draining lock");
        draining.insert((f, i), (h.bytes, h.validators, Instant::now()));
        true
    }

    /// Drops the replicas that left more than `cfg.timeout` ago (memory only: `serve_local`
    /// serves none older).
    pub(super) fn drain_expired(&self) {
        let now = Instant::now();
        let mut draining = self.draining.lock().expect("draining lock");
        draining.retain(|_, (.., t)| now.duration_since(*t) < self.cfg.timeout);
    }

    pub(super) fn authorised(&self, h: &HeaderMap) -> bool {
        serve::has_secret(h, &self.cfg.ring.secret)
    }

    pub(super) fn next_rng(&self) -> Rng {
        let seed = self.rng.lock().expect("rng lock").random::<u64>();
        cdnlab::rng::from_seed(seed)
    }
}
