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
        shares.clone()
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
            Ok(()) => answer(&s, Key::Media(name.into()), &req, None).await,
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
    let cached = s.store.lock().expect("store lock").get(id, name.as_ref());
    if let Some(body) = cached {
        s.metrics.hits.inc();
        return s.send(req, &body, "cdnlab; hit", stream);
    }
    // One fetch per object at a time (`flight`): whoever runs it stores the result, the
    // others wait for it.
    let mut flight = s.inflight.join(id);
    let fetched = flight.result(|| s.fetch(&key)).await;
    let fetched_here = flight.ran();
    let mut stored = false;
    if fetched_here {
        if let Fetched::Body(b) = &fetched
            && b.name() == name.as_ref()
        {
            stored = s.store.lock().expect("store lock").put(id, b);
        }
        s.metrics.misses.inc();
    } else {
        s.metrics.collapsed.inc();
    }
    // After the store has it, so that no request finds neither.
    drop(flight);
    match fetched {
        Fetched::Body(b) => {
            let status = match (fetched_here, stored) {
                (false, _) => "cdnlab; fwd=miss; collapsed",
                (true, true) => "cdnlab; fwd=miss; stored",
                (true, false) => "cdnlab; fwd=miss",
            };
            s.send(req, &b, status, stream)
        }
        Fetched::Status(404) => failure(
            StatusCode::NOT_FOUND,
            "cdnlab; fwd=miss; fwd-status=404".into(),
        ),
        Fetched::Status(code) => failure(
            StatusCode::BAD_GATEWAY,
            format!("cdnlab; fwd=miss; fwd-status={code}"),
        ),
        Fetched::Timeout => failure(
            StatusCode::GATEWAY_TIMEOUT,
            "cdnlab; fwd=miss; detail=\"origin timeout\"".into(),
        ),
        Fetched::Unreachable => failure(
            StatusCode::BAD_GATEWAY,
            "cdnlab; fwd=miss; detail=\"origin unreachable\"".into(),
        ),
    }
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
    pub(super) async fn fetch(&self, key: &Key) -> Fetched {
        self.metrics.origin_fetches.inc();
        let url = match key {
            Key::Catalogue(id) => format!("{}content/{id}", self.origin_url),
            Key::Media(name) => format!("{}media/{name}", self.origin_url),
        };
        let r = match self
            .client
            .get(url)
            .timeout(self.cfg.origin_timeout)
            .send()
            .await
        {
            Ok(resp) if resp.status() == reqwest::StatusCode::OK => {
                let validators = Arc::new(Validators::from_headers(resp.headers()));
                // One of the types the origin sends, as a static string: a parsed header value
                // is a slice of the response's whole read buffer, which a cached object would
                // keep alive (measured: 55 MB resident for an 8 MiB cache of 1 KiB objects).
                let content_type = resp
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map_or("application/octet-stream", crate::media::known_content_type);
                match read_body(resp).await {
                    Ok(bytes) => Fetched::Body(Object {
                        bytes,
                        validators,
                        fetched: tenths_since_epoch(),
                        media: key.name().map(|n| Arc::new((n, content_type))),
                    }),
                    Err(e) if e.is_timeout() => Fetched::Timeout,
                    Err(_) => Fetched::Unreachable,
                }
            }
            Ok(resp) => Fetched::Status(resp.status().as_u16()),
            Err(e) if e.is_timeout() => Fetched::Timeout,
            Err(_) => Fetched::Unreachable,
        };
        if !matches!(r, Fetched::Body(_) | Fetched::Status(404)) {
            self.metrics.origin_errors.inc();
        }
        r
    }

    /// A 200 answer with `body`: shaped if the edge has a bandwidth, paced if it has a stream
    /// rate, and holding an admitted stream's slot until its last byte.
    pub(super) fn send(
        self: &Arc<Self>,
        req: &HeaderMap,
        object: &Object,
        cache_status: &'static str,
        stream: Option<Admitted>,
    ) -> Response {
        // Conditional and range requests (RFC 9110), on the object's validators.
        let (status, mut headers, body) = http::answer(req, &object.validators, &object.bytes);
        self.metrics.bytes_sent.inc_by(body.len() as u64);
        let len = body.len();
        let body = if self.shaper.is_some() || self.cfg.stream_rate.is_some() || stream.is_some() {
            let me = self.clone();
            let start = tokio::time::Instant::now();
            Body::from_stream(futures_util::stream::unfold(
                (0usize, stream),
                move |(at, stream)| {
                    let (me, body) = (me.clone(), body.clone());
                    async move {
                        if at >= body.len() {
                            return None; // the stream's slot, if any, is released here
                        }
                        let end = (at + CHUNK).min(body.len());
                        if let Some(b) = &me.shaper {
                            b.take((end - at) as u64).await;
                        }
                        if let Some(rate) = me.cfg.stream_rate {
                            // The chunk goes out when the stream has lasted its bytes / rate.
                            let due = start + Duration::from_secs_f64(end as f64 / rate as f64);
                            tokio::time::sleep_until(due).await;
                        }
                        Some((Ok::<_, std::io::Error>(body.slice(at..end)), (end, stream)))
                    }
                },
            ))
        } else {
            Body::from(body)
        };
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(object.content_type()),
        );
        if status != StatusCode::NOT_MODIFIED {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        }
        headers.insert(
            HeaderName::from_static("cache-status"),
            HeaderValue::from_static(cache_status),
        );
        // Seconds since the object came from the origin (RFC 9111 section 5.1).
        headers.insert(
            header::AGE,
            HeaderValue::from(tenths_since_epoch().saturating_sub(object.fetched) / 10),
        );
        (status, headers, body).into_response()
    }
}

pub(super) async fn metrics(State(s): State<Arc<EdgeState>>) -> Response {
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
            s.no_threshold.load(std::sync::atomic::Ordering::Relaxed) as f64,
        ),
        single(
            "cdnlab_origin_fetches_in_flight",
            "Origin fetches under way (one per object, shared by its concurrent misses).",
            Kind::GAUGE,
            s.inflight.len() as f64,
        ),
    ]))
}
