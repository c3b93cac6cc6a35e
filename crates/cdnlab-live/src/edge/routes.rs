//! An edge's HTTP routes: content and media through the cache (coalesced origin fetches,
//! `Cache-Status`, ranges, shaping), streaming admission (`/internal/admission`) and `/metrics`.

use super::*;

pub(super) async fn install(
    State(s): State<Arc<EdgeState>>,
    h: HeaderMap,
    q: Result<Query<Install>, QueryRejection>,
) -> Response {
    let q = match crate::serve::internal_query(s.authorised(&h), q, "population=NAME&limit=STREAMS")
    {
        Ok(q) => q,
        Err(refused) => return refused,
    };
    if !good_population(&q.population) {
        return (StatusCode::BAD_REQUEST, "population: 1 to 64 characters\n").into_response();
    }
    let mut shares = s.admission.lock().expect("admission lock");
    if shares.len() >= MAX_POPULATIONS && !shares.contains_key(&q.population) {
        return (
            StatusCode::BAD_REQUEST,
            "too many populations (4096 at most)\n",
        )
            .into_response();
    }
    // Streams already admitted keep their slots: a lower limit only refuses new ones.
    shares.entry(q.population).or_default().limit = q.limit;
    StatusCode::NO_CONTENT.into_response()
}

pub(super) async fn shares(State(s): State<Arc<EdgeState>>, h: HeaderMap) -> Response {
    if !s.authorised(&h) {
        return crate::serve::secret_required();
    }
    let shares = {
        let mut shares = s.admission.lock().expect("admission lock");
        let mut sessions = s.sessions.lock().expect("sessions lock");
        sessions.sweep(&mut shares, Instant::now(), s.cfg.session_lease, true);
        let mut report = shares.clone();
        for x in report.values_mut() {
            x.in_flight = 0;
        }
        for ((p, _), held) in &sessions.admitted {
            if let Some(x) = report.get_mut(p) {
                x.in_flight += u64::from(held.under_way);
            }
        }
        // The peak is per report: the next one starts from the streams held now.
        for x in shares.values_mut() {
            x.peak = x.active;
        }
        report
    };
    axum::Json(shares).into_response()
}

/// Counts a request in flight for as long as it lives.
pub(super) struct InFlight<'a>(&'a Metrics);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

pub(super) async fn content(
    State(s): State<Arc<EdgeState>>,
    Path(id): Path<String>,
    who: Result<Query<Who>, QueryRejection>,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    s.metrics.in_flight.inc();
    let _guard = InFlight(&s.metrics);
    let population = who.ok().and_then(|Query(w)| w.population);
    let r = match (s.admit(population.as_deref()), parse_id(&id, None)) {
        (Ok(stream), Ok(id)) => answer(&s, Key::Catalogue(id), &req, stream).await,
        (Ok(_), Err(IdError::Malformed | IdError::Unknown)) => (
            StatusCode::BAD_REQUEST,
            "object id: 1 to 20 decimal digits\n",
        )
            .into_response(),
        (Err(refused), _) => refused.into_response(),
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

/// A name in a session path: 1 to 64 of letters, digits, `-` and `_`.
pub(super) fn session_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub(super) async fn media(
    State(s): State<Arc<EdgeState>>,
    Path((population, session, name)): Path<(String, String, String)>,
    RawQuery(query): RawQuery,
    req: HeaderMap,
) -> Response {
    let t = Instant::now();
    s.metrics.in_flight.inc();
    let _guard = InFlight(&s.metrics);
    let r = if !session_name(&population) || !session_name(&session) {
        (
            StatusCode::BAD_REQUEST,
            "population and session: 1 to 64 letters, digits, - or _\n",
        )
            .into_response()
    } else if !crate::media::valid_name(&name) {
        (
            StatusCode::BAD_REQUEST,
            "file name: 1 to 128 letters, digits, '.', '-' or '_'\n",
        )
            .into_response()
    } else {
        match s.admit_session(&population, &session) {
            Ok(held) => {
                // Only an admitted session's report counts: its name is checked (with
                // admission, a token this population's steering server signed).
                s.read_cmcd(&session, query.as_deref(), &req);
                answer(&s, Key::Media(name.into()), &req, held).await
            }
            Err(refused) => refused.into_response(),
        }
    };
    s.metrics.record(r.status().as_u16(), t.elapsed());
    let mut r = r;
    r.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    r
}

pub(super) async fn answer(
    s: &Arc<EdgeState>,
    key: Key,
    req: &HeaderMap,
    stream: Option<Admitted>,
) -> Response {
    let id = key.id();
    let name = key.name();
    let cached = s
        .store
        .lock()
        .expect("store lock")
        .get(id, name.as_ref())
        // A stored response selected by other request headers is not this one's (RFC 9111
        // section 4.1): fetched afresh.
        .filter(|o| o.fresh.selects(req));
    if let Some(object) = &cached
        && object.fresh.fresh(tenths_since_epoch())
    {
        s.metrics.hits.inc();
        let meta = object.meta();
        return s.send(
            req,
            &key,
            &meta,
            Source::Stored(object.body.clone()),
            "cdnlab; hit",
            stream,
        );
    }
    if let Some(stale) = cached {
        return revalidate(s, key, req, stale, stream).await;
    }
    // A fill under way: read it from the start while it goes on.
    let joined = s
        .filling
        .lock()
        .expect("filling lock")
        .get(&id)
        .filter(|(_, m)| m.name() == name.as_ref())
        .cloned();
    if let Some((fill, meta)) = joined {
        s.metrics.collapsed.inc();
        return s.send(
            req,
            &key,
            &meta,
            Source::Fill(fill),
            "cdnlab; fwd=miss; collapsed",
            stream,
        );
    }
    // One origin request per object at a time (`flight`), until its response head: a fill is
    // registered in `filling` before the flight ends, so that no request finds neither.
    let mut flight = s.inflight.join(id);
    let fetched = flight.result(|| s.fetch(&key, req, None)).await;
    let ran = flight.ran();
    drop(flight);
    if ran {
        s.metrics.misses.inc();
    } else {
        s.metrics.collapsed.inc();
    }
    match fetched {
        Fetched::Fill(fill, meta)
            if meta.name() == name.as_ref() && (ran || meta.fresh.selects(req)) =>
        {
            let status = if ran {
                "cdnlab; fwd=miss; stored"
            } else {
                "cdnlab; fwd=miss; collapsed"
            };
            s.send(req, &key, &meta, Source::Fill(fill), status, stream)
        }
        // Another file with the same hash (media), or a waiter whose request headers the
        // response does not vary alike (RFC 9111 section 4.1): a request of its own.
        Fetched::Fill(_, meta) => {
            s.send(req, &key, &meta, Source::Origin, "cdnlab; fwd=miss", stream)
        }
        Fetched::Pass(slot, meta) => s.pass(req, &key, &slot, &meta, "cdnlab; fwd=miss", stream),
        other => origin_failed(&other, "miss"),
    }
}

/// The answer to a fetch that gave no body: 404 for an object the origin lacks, 502 for its
/// errors or no connection, 504 for its timeout, 503 when no pass-through stream is free;
/// `fwd` is the `Cache-Status` forward reason (`miss`, or `stale` for a validation).
fn origin_failed(fetched: &Fetched, fwd: &str) -> Response {
    match fetched {
        Fetched::Busy => busy(),
        Fetched::Status(404) => failure(
            StatusCode::NOT_FOUND,
            format!("cdnlab; fwd={fwd}; fwd-status=404"),
        ),
        Fetched::Status(code) => failure(
            StatusCode::BAD_GATEWAY,
            format!("cdnlab; fwd={fwd}; fwd-status={code}"),
        ),
        // A 304 to a request that was not a validation: the origin is confused.
        Fetched::NotModified(..) => failure(
            StatusCode::BAD_GATEWAY,
            format!("cdnlab; fwd={fwd}; fwd-status=304"),
        ),
        Fetched::Timeout => failure(
            StatusCode::GATEWAY_TIMEOUT,
            format!("cdnlab; fwd={fwd}; detail=\"origin timeout\""),
        ),
        Fetched::Unreachable | Fetched::Fill(..) | Fetched::Pass(..) => failure(
            StatusCode::BAD_GATEWAY,
            format!("cdnlab; fwd={fwd}; detail=\"origin unreachable\""),
        ),
    }
}

/// The answer when every pass-through stream is taken.
fn busy() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "1")],
        "too many uncached streams at once\n",
    )
        .into_response()
}

/// A stored response that is stale: validated with the origin (RFC 9111 section 4.3), one
/// validation per object at a time. A 304 makes it fresh again (4.3.4) and it is served; a new
/// representation is filled and served; an origin failure is answered with the stale one if
/// its `stale-if-error` allows (RFC 5861 section 4), else as a miss's failure.
async fn revalidate(
    s: &Arc<EdgeState>,
    key: Key,
    req: &HeaderMap,
    stale: Object,
    stream: Option<Admitted>,
) -> Response {
    let id = key.id();
    let mut flight = s.inflight.join(id);
    let fetched = flight.result(|| s.fetch(&key, req, Some(&stale))).await;
    let ran = flight.ran();
    if ran {
        if let Fetched::NotModified(fresh, fetched) = &fetched {
            s.store
                .lock()
                .expect("store lock")
                .refresh(id, &stale.body, fresh, *fetched);
        }
        s.metrics.misses.inc();
    } else {
        s.metrics.collapsed.inc();
    }
    drop(flight);
    let served_stale = |code: u16, stream: Option<Admitted>| {
        let meta = stale.meta();
        let status = format!("cdnlab; fwd=stale; fwd-status={code}");
        let mut r = s.send(
            req,
            &key,
            &meta,
            Source::Stored(stale.body.clone()),
            "cdnlab; fwd=stale",
            stream,
        );
        if let Ok(v) = HeaderValue::from_str(&status) {
            r.headers_mut().insert("cache-status", v);
        }
        r
    };
    let may_serve_stale = tenths_since_epoch() < stale.fresh.stale_until;
    match fetched {
        Fetched::NotModified(fresh, fetched) => {
            let mut o = stale.clone();
            o.fresh = fresh;
            o.fetched = fetched;
            let meta = o.meta();
            let mut r = s.send(
                req,
                &key,
                &meta,
                Source::Stored(o.body.clone()),
                "cdnlab; fwd=stale",
                stream,
            );
            r.headers_mut().insert(
                "cache-status",
                HeaderValue::from_static("cdnlab; fwd=stale; fwd-status=304"),
            );
            r
        }
        Fetched::Fill(fill, meta) if ran || meta.fresh.selects(req) => s.send(
            req,
            &key,
            &meta,
            Source::Fill(fill),
            "cdnlab; fwd=stale; fwd-status=200",
            stream,
        ),
        Fetched::Fill(_, meta) => {
            s.send(req, &key, &meta, Source::Origin, "cdnlab; fwd=miss", stream)
        }
        Fetched::Pass(slot, meta) => s.pass(
            req,
            &key,
            &slot,
            &meta,
            "cdnlab; fwd=stale; fwd-status=200",
            stream,
        ),
        Fetched::Status(code) if may_serve_stale && code != 404 => served_stale(code, stream),
        Fetched::Timeout | Fetched::Unreachable if may_serve_stale => served_stale(504, stream),
        other => origin_failed(&other, "stale"),
    }
}

/// Where a response's body comes from.
pub(super) enum Source {
    Stored(Arc<Pieces>),
    Fill(Arc<Fill>),
    /// The origin's response to this request (passed through).
    Response(reqwest::Response, OwnedSemaphorePermit),
    /// A request of its own to the origin (passed through).
    Origin,
}

/// An error answer with its `Cache-Status`.
pub(super) fn failure(code: StatusCode, cache_status: String) -> Response {
    let mut r = (
        code,
        format!("{}\n", code.canonical_reason().unwrap_or("error")),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&cache_status) {
        r.headers_mut().insert("cache-status", v);
    }
    r
}

impl EdgeState {
    pub(super) fn url(&self, key: &Key) -> String {
        match key {
            Key::Catalogue(id) => format!("{}content/{id}", self.origin_url),
            Key::Media(name) => format!("{}media/{name}", self.origin_url),
        }
    }

    /// Asks the origin for `key`, up to its response head (within the origin timeout): a
    /// cacheable object is filled by a task of its own (registered in `filling`), a larger
    /// one, or one the fill budget has no room for, is passed through.
    pub(super) async fn fetch(
        self: &Arc<Self>,
        key: &Key,
        req: &HeaderMap,
        stale: Option<&Object>,
    ) -> Fetched {
        self.metrics.origin_fetches.inc();
        let started = tokio::time::Instant::now();
        let mut get = self.client.get(self.url(key)).headers(negotiation(req));
        if let Some((name, value)) = stale.and_then(|o| http::validation(&o.validators)) {
            get = get.header(name, value);
        }
        let sent = tokio::time::timeout(self.cfg.origin_timeout, get.send()).await;
        let now = SystemTime::now();
        let resp = match sent {
            Ok(Ok(r)) if r.status() == reqwest::StatusCode::NOT_MODIFIED && stale.is_some() => {
                // Section 4.3.4: the stored response is fresh again, by the 304's headers.
                let c = http::Caching::of(r.headers(), now);
                let fetched = arrived(&c);
                return Fetched::NotModified(Fresh::of(&c, req, fetched), fetched);
            }
            Ok(Ok(r)) if r.status() == reqwest::StatusCode::OK => r,
            Ok(Ok(r)) => {
                if r.status() != reqwest::StatusCode::NOT_FOUND {
                    self.metrics.origin_errors.inc();
                }
                return Fetched::Status(r.status().as_u16());
            }
            Ok(Err(e)) if !e.is_timeout() => {
                self.metrics.origin_errors.inc();
                return Fetched::Unreachable;
            }
            _ => {
                self.metrics.origin_errors.inc();
                return Fetched::Timeout;
            }
        };
        // One of the types the origin sends, as a static string: a parsed header value is a
        // slice of the response's whole read buffer, which a cached object would keep alive
        // (measured: 55 MB resident for an 8 MiB cache of 1 KiB objects).
        let content_type = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map_or("application/octet-stream", crate::media::known_content_type);
        let caching = http::Caching::of(resp.headers(), now);
        let fetched = arrived(&caching);
        let meta = Meta {
            validators: Arc::new(Validators::from_headers(resp.headers())),
            len: resp.content_length().and_then(|n| usize::try_from(n).ok()),
            fetched,
            media: key.name().map(|n| Arc::new((n, content_type))),
            fresh: Fresh::of(&caching, req, fetched),
            forward: (!caching.storable).then(|| Arc::new(forwarded(resp.headers()))),
        };
        let kib = |n: usize| u32::try_from(n.div_ceil(1024)).unwrap_or(u32::MAX);
        let budget = match meta.len {
            // Not storable (RFC 9111 section 3): passed through, never shared.
            _ if !caching.storable => None,
            Some(n) if n > self.max_object => None,
            Some(n) => self.fill_budget.clone().try_acquire_many_owned(kib(n)).ok(),
            // Unknown length: the fill takes its budget as the bytes come.
            None => self.fill_budget.clone().try_acquire_many_owned(0).ok(),
        };
        let Some(budget) = budget else {
            return match self.streams.clone().try_acquire_owned() {
                Ok(permit) => Fetched::Pass(Arc::new(Mutex::new(Some((resp, permit)))), meta),
                Err(_) => Fetched::Busy,
            };
        };
        let fill = Fill::new(meta.validators.clone(), meta.len);
        let id = key.id();
        self.filling
            .lock()
            .expect("filling lock")
            .insert(id, (fill.clone(), meta.clone()));
        let deadline = started + self.cfg.origin_timeout;
        tokio::spawn(run_fill(
            self.clone(),
            id,
            fill.clone(),
            meta.clone(),
            resp,
            budget,
            deadline,
        ));
        Fetched::Fill(fill, meta)
    }

    /// A 200 (or 206, 304, 416) answer: shaped if the edge has a bandwidth, paced if it has a
    /// stream rate, and holding an admitted stream's slot until its last byte.
    pub(super) fn send(
        self: &Arc<Self>,
        req: &HeaderMap,
        key: &Key,
        meta: &Meta,
        source: Source,
        cache_status: &'static str,
        stream: Option<Admitted>,
    ) -> Response {
        // Conditional and range requests (RFC 9110), on the object's validators; a length the
        // origin did not announce allows no range (the whole body, chunked).
        let (plan, len) = match meta.len {
            Some(len) => (http::Plan::of(req, &meta.validators, len), len),
            None => {
                let mut h = req.clone();
                h.remove(header::RANGE);
                (http::Plan::of(&h, &meta.validators, 0), usize::MAX)
            }
        };
        let (status, range) = plan.status(len);
        let mut headers = HeaderMap::new();
        meta.validators.write(&mut headers);
        if let Some(r) = range.and_then(|r| HeaderValue::from_str(&r).ok()) {
            headers.insert(header::CONTENT_RANGE, r);
        }
        let part = plan.body(len);
        let body_len = part.len();
        if meta.len.is_some() {
            self.metrics.bytes_sent.inc_by(body_len as u64);
        }
        // How a reader goes to the origin; built only for bodies that stream (not for a small
        // hit, whose rate it would cost).
        let origin = || fill::Origin {
            client: self.client.clone(),
            url: self.url(key),
            validators: meta.validators.clone(),
            timeout: self.cfg.origin_timeout,
            streams: self.streams.clone(),
            headers: negotiation(req),
        };
        let paced = self.shaper.is_some() || self.cfg.stream_rate.is_some() || stream.is_some();
        let body = match source {
            _ if body_len == 0 => Body::empty(),
            // A small stored body in one piece: sent as it is.
            Source::Stored(b) if !paced && b.single().is_some() => Body::from(
                b.single()
                    .map(|p| p.slice(part.clone()))
                    .unwrap_or_default(),
            ),
            source => {
                let reader = match source {
                    Source::Stored(b) => fill::Reader::from_stored(&b, part, origin()),
                    Source::Fill(f) => fill::Reader::from_fill(f, part, origin()),
                    Source::Response(r, permit) => {
                        fill::Reader::from_response(r, part, permit, origin())
                    }
                    Source::Origin => fill::Reader::from_origin(part, origin()),
                };
                self.stream_body(reader, stream)
            }
        };
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(meta.content_type()),
        );
        if let Some(f) = &meta.forward {
            for (k, v) in f.iter() {
                headers.append(k, v.clone());
            }
        }
        if status != StatusCode::NOT_MODIFIED && meta.len.is_some() {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body_len));
        }
        headers.insert(
            HeaderName::from_static("cache-status"),
            HeaderValue::from_static(cache_status),
        );
        // Seconds since the object came from the origin (RFC 9111 section 5.1).
        headers.insert(
            header::AGE,
            HeaderValue::from(tenths_since_epoch().saturating_sub(meta.fetched) / 10),
        );
        (status, headers, body).into_response()
    }

    /// A passed-through response: the origin's answer to the request that fetched it, or, for
    /// the others that waited, a request of their own.
    fn pass(
        self: &Arc<Self>,
        req: &HeaderMap,
        key: &Key,
        slot: &Mutex<Option<(reqwest::Response, OwnedSemaphorePermit)>>,
        meta: &Meta,
        cache_status: &'static str,
        stream: Option<Admitted>,
    ) -> Response {
        match slot.lock().expect("pass lock").take() {
            Some((r, permit)) => self.send(
                req,
                key,
                meta,
                Source::Response(r, permit),
                cache_status,
                stream,
            ),
            None => self.send(req, key, meta, Source::Origin, "cdnlab; fwd=miss", stream),
        }
    }

    /// A body read from `reader`, in chunks of at most [`CHUNK`] bytes through the shaper and
    /// the stream rate when the edge has them, holding an admitted stream's slot to the end.
    fn stream_body(self: &Arc<Self>, reader: fill::Reader, stream: Option<Admitted>) -> Body {
        let me = self.clone();
        let start = tokio::time::Instant::now();
        let paced = self.shaper.is_some() || self.cfg.stream_rate.is_some();
        Body::from_stream(futures_util::stream::unfold(
            (reader, Bytes::new(), 0usize, stream),
            move |(mut reader, mut pending, sent, stream)| {
                let me = me.clone();
                async move {
                    if pending.is_empty() {
                        match reader.next().await? {
                            Ok(b) => pending = b,
                            Err(e) => return Some((Err(e), (reader, pending, sent, stream))),
                        }
                    }
                    let n = if paced {
                        pending.len().min(CHUNK)
                    } else {
                        pending.len()
                    };
                    let chunk = pending.split_to(n);
                    if let Some(b) = &me.shaper {
                        b.take(n as u64).await;
                    }
                    if let Some(rate) = me.cfg.stream_rate {
                        // The chunk goes out when the stream has lasted its bytes / rate.
                        let due = start + Duration::from_secs_f64((sent + n) as f64 / rate as f64);
                        tokio::time::sleep_until(due).await;
                    }
                    Some((
                        Ok::<_, std::io::Error>(chunk),
                        (reader, pending, sent + n, stream),
                    ))
                }
            },
        ))
    }
}

/// When a response that arrived now was fetched, in tenths since [`EPOCH`]: now less the age
/// it came with (RFC 9111 section 4.2.3), so that `Age` and freshness count it.
fn arrived(c: &http::Caching) -> u32 {
    tenths_since_epoch().saturating_sub(u32::try_from(c.age.as_millis() / 100).unwrap_or(u32::MAX))
}

/// The client's content-negotiation headers, passed on to the origin so that a response that
/// varies on them (RFC 9110 section 12.5) is chosen for this client, and the `Vary` of what is
/// stored can be checked (RFC 9111 section 4.1).
fn negotiation(req: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for name in [
        header::ACCEPT,
        header::ACCEPT_ENCODING,
        header::ACCEPT_LANGUAGE,
    ] {
        for v in req.get_all(&name) {
            out.append(name.clone(), v.clone());
        }
    }
    out
}

/// Copies of the headers a response that is not stored passes on to its client.
fn forwarded(h: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for name in [
        header::SET_COOKIE,
        header::CACHE_CONTROL,
        header::VARY,
        header::EXPIRES,
    ] {
        for v in h.get_all(&name) {
            if let Ok(v) = HeaderValue::from_bytes(v.as_bytes()) {
                out.append(name.clone(), v);
            }
        }
    }
    out
}

/// Reads a fill from the origin to its end, within the deadline, the largest object size and
/// the fill budget (taken as the bytes come when the length was not announced), then stores
/// it; otherwise abandons it, and its readers go on from the origin.
async fn run_fill(
    s: Arc<EdgeState>,
    id: u64,
    fill: Arc<Fill>,
    meta: Meta,
    mut resp: reqwest::Response,
    mut budget: OwnedSemaphorePermit,
    deadline: tokio::time::Instant,
) {
    let complete = loop {
        match tokio::time::timeout_at(deadline, resp.chunk()).await {
            Ok(Ok(Some(c))) => {
                let received = fill.received() + c.len();
                if received > s.max_object || meta.len.is_some_and(|n| received > n) {
                    break false;
                }
                let held = budget.num_permits() << 10;
                if received > held {
                    let more = u32::try_from((received - held).div_ceil(1024)).unwrap_or(u32::MAX);
                    match s.fill_budget.clone().try_acquire_many_owned(more) {
                        Ok(p) => budget.merge(p),
                        Err(_) => break false,
                    }
                }
                fill.push(&c);
            }
            Ok(Ok(None)) => break meta.len.is_none_or(|n| fill.received() == n),
            _ => {
                s.metrics.origin_errors.inc();
                break false;
            }
        }
    };
    if complete {
        let body = fill.complete();
        let object = Object {
            body,
            fresh: meta.fresh.clone(),
            validators: meta.validators.clone(),
            fetched: meta.fetched,
            media: meta.media.clone(),
        };
        s.store.lock().expect("store lock").put(id, &object);
    } else {
        fill.abandon();
    }
    // After the store has it, so that no request finds neither.
    let mut filling = s.filling.lock().expect("filling lock");
    if filling.get(&id).is_some_and(|(f, _)| Arc::ptr_eq(f, &fill)) {
        filling.remove(&id);
    }
}

/// `GET /internal/qoe` (with the secret): the sessions' CMCD aggregates over the window.
pub(super) async fn qoe(State(s): State<Arc<EdgeState>>, h: HeaderMap) -> Response {
    if !s.authorised(&h) {
        return crate::serve::secret_required();
    }
    axum::Json(Qoe {
        window_ms: u64::try_from(s.cfg.qoe_window.as_millis()).unwrap_or(u64::MAX),
        summary: s.qoe_summary(),
    })
    .into_response()
}

/// The answer of `/internal/qoe`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Qoe {
    pub window_ms: u64,
    pub summary: cdnlab::steer::tally::Summary,
}

pub(super) async fn metrics(State(s): State<Arc<EdgeState>>) -> Response {
    let q = s.qoe_summary();
    let untracked = s.qoe.lock().expect("qoe lock").untracked();
    // Prometheus wants base units and keeps the `quantile` label for summaries.
    let deciles = |sp: cdnlab::steer::tally::Spread, scale: f64| {
        [("0.1", sp.p10), ("0.5", sp.p50), ("0.9", sp.p90)]
            .into_iter()
            .filter(move |_| sp.n > 0)
            .map(move |(d, v)| (vec![("decile", d.to_string())], f64::from(v) * scale))
    };
    let (objects, used) = {
        let st = s.store.lock().expect("store lock");
        (st.cache.len() as f64, st.cache.used() as f64)
    };
    metrics::response(s.metrics.render(vec![
        single(
            "cdnlab_cache_objects",
            "Objects in the cache.",
            Kind::GAUGE,
            objects,
        ),
        single(
            "cdnlab_cache_bytes",
            "Bytes in the cache.",
            Kind::GAUGE,
            used,
        ),
        single(
            "cdnlab_cache_capacity_bytes",
            "Cache capacity in bytes.",
            Kind::GAUGE,
            s.cfg.capacity as f64,
        ),
        single(
            "cdnlab_admission_no_threshold_total",
            "Streams refused (503) because their population has no threshold here (yet).",
            Kind::COUNTER,
            s.no_threshold.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_admission_bad_token_total",
            "Session requests refused (403): a token not minted for the population, or expired.",
            Kind::COUNTER,
            s.bad_token.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_admission_session_busy_total",
            "Session requests refused (429): too many of one session under way.",
            Kind::COUNTER,
            s.busy.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_cmcd_reports_total",
            "Session requests whose CMCD data (CTA-5004) was read.",
            Kind::COUNTER,
            s.cmcd_read.load(Relaxed) as f64,
        ),
        family(
            "cdnlab_cmcd_refused_total",
            "Session requests whose CMCD data was ignored, by reason.",
            Kind::COUNTER,
            [
                ("malformed", s.cmcd_malformed.load(Relaxed)),
                ("oversized", s.cmcd_oversized.load(Relaxed)),
            ]
            .map(|(r, n)| (vec![("reason", r.to_string())], n as f64)),
        ),
        single(
            "cdnlab_cmcd_dropped_values_total",
            "CMCD values of the wrong type or out of range, ignored.",
            Kind::COUNTER,
            s.cmcd_dropped.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_cmcd_untracked_total",
            "CMCD reports from sessions that found the session table full.",
            Kind::COUNTER,
            untracked as f64,
        ),
        single(
            "cdnlab_cmcd_sessions",
            "Sessions that sent CMCD data in the window.",
            Kind::GAUGE,
            f64::from(q.sessions),
        ),
        single(
            "cdnlab_cmcd_starving_sessions",
            "Of them, sessions that reported buffer starvation (bs) in the window.",
            Kind::GAUGE,
            f64::from(q.starving),
        ),
        family(
            "cdnlab_cmcd_throughput_bytes_per_second",
            "Deciles over the window's sessions of their latest measured throughput (mtp).",
            Kind::GAUGE,
            deciles(q.throughput_kbps, 125.0),
        ),
        family(
            "cdnlab_cmcd_bitrate_bytes_per_second",
            "Deciles over the window's sessions of their latest encoded bitrate (br).",
            Kind::GAUGE,
            deciles(q.bitrate_kbps, 125.0),
        ),
        family(
            "cdnlab_cmcd_buffer_seconds",
            "Deciles over the window's sessions of their latest buffer length (bl).",
            Kind::GAUGE,
            deciles(q.buffer_ms, 0.001),
        ),
        single(
            "cdnlab_origin_fetches_in_flight",
            "Origin fetches under way (one per object, shared by its concurrent misses).",
            Kind::GAUGE,
            s.inflight.len() as f64,
        ),
    ]))
}
