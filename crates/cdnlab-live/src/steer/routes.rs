//! The steering server's HTTP routes: content-steering manifests (HLS and DASH) by the library's
//! order, streaming sessions (`/play/`), taking edges out, the allocation and `/metrics`.

use super::*;

/// The answer to an unknown population.
pub(super) fn unknown_population() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(serde_json::json!({"error": "unknown population"})),
    )
        .into_response()
}

/// Which edges may be in an order now: reachable at the last report, holding the plan's
/// thresholds, and not taken out.
pub(super) fn usable(s: &SteerState) -> Vec<bool> {
    let reachable = s.reachable.lock().expect("reachable lock");
    let ready = s.ready.lock().expect("ready lock");
    let out = s.out.lock().expect("out lock");
    reachable
        .iter()
        .zip(ready.iter())
        .zip(out.iter())
        .map(|((&r, &t), &o)| r && t && !o)
        .collect()
}

pub(super) fn set_out(s: &SteerState, name: &str, out: bool) -> bool {
    let Some(j) = s.cfg.topology.servers.iter().position(|e| e.name == name) else {
        return false;
    };
    s.out.lock().expect("out lock")[j] = out;
    true
}

/// The order of population `i`'s session at `point`, by the library's rule, with the
/// pathways in `slow` moved last.
pub(super) fn order_for(s: &SteerState, i: usize, point: f64, slow: &[usize]) -> Vec<usize> {
    let (shares, hops, up) = population_view(s, i);
    let mut order = never_empty(&up, |up| steering::session_order(&shares, &hops, up, point));
    order.sort_by_key(|j| slow.contains(j));
    order
}

/// Population `i`'s edges when no session is named: by share, largest first
/// ([`steering::share_order`]).
pub(super) fn population_order(s: &SteerState, i: usize) -> Vec<usize> {
    let (shares, hops, up) = population_view(s, i);
    never_empty(&up, |up| steering::share_order(&shares, &hops, up))
}

/// The order `rule` gives with the usable edges `up`; if that leaves none (every edge out), the
/// order it gives with every edge, then every edge: a player handed an empty list has nowhere
/// to go, and the HLS steering manifest's `PATHWAY-PRIORITY` is a non-empty list
/// (draft-pantos-hls-rfc8216bis section 7.2). Better an edge that may be back than none.
fn never_empty(up: &[bool], rule: impl Fn(&[bool]) -> Vec<usize>) -> Vec<usize> {
    let order = rule(up);
    if !order.is_empty() {
        return order;
    }
    let all = vec![true; up.len()];
    let order = rule(&all);
    if order.is_empty() {
        (0..up.len()).collect()
    } else {
        order
    }
}

/// The values of a player's list parameter: dash.js quotes the whole list
/// (`_DASH_pathway="a,b"`), as a structured-field string; hls.js sends one bare value.
pub(super) fn list(v: &str) -> Vec<&str> {
    let v = v.trim();
    let v = v
        .strip_prefix('"')
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or(v);
    v.split(',')
        .map(|x| x.trim().trim_matches('"'))
        .filter(|x| !x.is_empty())
        .collect()
}

/// What the steering rule reads for population `i`: its thresholds (shares) at each edge, the
/// hops to each edge, and which edges are usable.
pub(super) fn population_view(s: &SteerState, i: usize) -> (Vec<i64>, Vec<i64>, Vec<bool>) {
    let t = &s.cfg.topology;
    let n = t.servers.len();
    let shares = s.plan.lock().expect("plan lock").thresholds[i * n..(i + 1) * n].to_vec();
    let hops: Vec<i64> = t
        .servers
        .iter()
        .map(|e| t.costs[t.populations[i].node][e.node])
        .collect();
    (shares, hops, usable(s))
}

/// The pathways a player reports as slower than the lowest rendition: pairs of
/// `{prefix}_pathway` and `{prefix}_throughput` (comma-separated lists for DASH), bits per second.
pub(super) fn slow_pathways(
    s: &SteerState,
    q: &HashMap<String, String>,
    prefix: &str,
) -> Vec<usize> {
    let Some(min) = s.cfg.media.as_ref().map(|a| a.min_bandwidth as f64) else {
        return Vec::new();
    };
    let (Some(paths), Some(rates)) = (
        q.get(&format!("{prefix}_pathway")),
        q.get(&format!("{prefix}_throughput")),
    ) else {
        return Vec::new();
    };
    let servers = &s.cfg.topology.servers;
    list(paths)
        .into_iter()
        .zip(list(rates))
        .filter(|(_, r)| r.parse::<f64>().is_ok_and(|r| r > 0.0 && r < min))
        .filter_map(|(p, _)| servers.iter().position(|e| e.name == p))
        .collect()
}

/// A content-steering manifest (HLS, or DASH-IF's, which has the same keys).
pub(super) async fn manifest(
    State(s): State<Arc<SteerState>>,
    Path(population): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    steering_answer(&s, &population, &q, false)
}

pub(super) async fn dash_manifest(
    State(s): State<Arc<SteerState>>,
    Path(population): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    steering_answer(&s, &population, &q, true)
}

pub(super) fn steering_answer(
    s: &SteerState,
    population: &str,
    q: &HashMap<String, String>,
    dash: bool,
) -> Response {
    let t = &s.cfg.topology;
    let Some(i) = t.populations.iter().position(|p| p.name == population) else {
        return unknown_population();
    };
    let n = t.servers.len();
    let session = q.get("session").filter(|x| good_name(x));
    let prefix = if dash { "_DASH" } else { "_HLS" };
    let slow = slow_pathways(s, q, prefix);
    let (order, listed) = match session {
        None => {
            // No session: the population's edges by share, largest first.
            (population_order(s, i), (0..n).collect::<Vec<_>>())
        }
        Some(id) => {
            let mut sessions = s.sessions.lock().expect("sessions lock");
            let (point, listed) = match sessions.touch(id, i, Instant::now()) {
                Some(x) => {
                    x.reloads += 1;
                    // The content-steering corners (HLS 4.4.6.6, DASH-IF CTS): 410 tells the
                    // player to stop reloading for the rest of the session; 429 to retry after
                    // Retry-After.
                    if x.ended {
                        return gone();
                    }
                    if let Some(secs) = x.throttle.take() {
                        return refuse(
                            StatusCode::TOO_MANY_REQUESTS,
                            Duration::from_secs(u64::from(secs)),
                            "steering reloads throttled\n",
                        );
                    }
                    // The pathway in use: hls.js's one value, the first of dash.js's list.
                    if let Some(j) = q
                        .get(&format!("{prefix}_pathway"))
                        .and_then(|p| list(p).first().copied())
                        .and_then(|p| t.servers.iter().position(|e| e.name == p))
                    {
                        x.pathway = Some((j, Instant::now()));
                    }
                    if s.cfg.policy != Policy::Shares {
                        let order = policy_order(s, i, q, prefix, &mut x.mem);
                        let listed = x.listed.clone();
                        drop(sessions);
                        return answer(s, population, session, (order, listed), dash);
                    }
                    (x.point, x.listed.clone())
                }
                // A session forgotten (or opened before a restart) keeps its point if its token
                // is this population's; anything else gets a point hashed from it.
                None => {
                    let point = crate::session::check(&t.secret, population, id, 0).map_or_else(
                        |_| steering::hashed_point(id),
                        |x| steering::session_point(x.serial),
                    );
                    (point, (0..n).collect())
                }
            };
            drop(sessions);
            (order_for(s, i, point, &slow), listed)
        }
    };
    answer(s, population, session, (order, listed), dash)
}

/// The order of a session under a policy other than `tp`: the library's rule
/// (`Steering::order`) over what the edges reported in the last window. GWTW is first fed the
/// throughput the player reports for the pathway it uses (`_HLS_throughput`, or the first of
/// `_DASH_throughput`), as a share of the asset's top rendition.
fn policy_order(
    s: &SteerState,
    i: usize,
    q: &HashMap<String, String>,
    prefix: &str,
    mem: &mut Memory,
) -> Vec<usize> {
    let t = &s.cfg.topology;
    let (shares, hops, up) = population_view(s, i);
    let top_kbps = s
        .cfg
        .media
        .as_ref()
        .map_or(0.0, |a| a.max_bandwidth as f64 / 1000.0);
    let signals = s.signals.lock().expect("signals lock").clone();
    let views: Vec<policy::Pathway> = (0..t.servers.len())
        .map(|j| policy::Pathway {
            usable: up[j],
            distance: hops[j] as f64,
            share: shares[j],
            capacity_kbps: t.servers[j].capacity as f64 * top_kbps,
            qoe: signals[j].qoe,
            in_flight: signals[j].in_flight,
            latency_ms: signals[j].latency_ms,
        })
        .collect();
    let mut steering = s.steering.lock().expect("steering lock");
    let mut rng = s.rng.lock().expect("rng lock");
    let reported = q
        .get(&format!("{prefix}_pathway"))
        .and_then(|p| list(p).first().copied())
        .and_then(|p| t.servers.iter().position(|e| e.name == p))
        .zip(
            q.get(&format!("{prefix}_throughput"))
                .and_then(|r| list(r).first().and_then(|r| r.parse::<f64>().ok()))
                .filter(|r| r.is_finite() && *r >= 0.0),
        );
    // Where the player says it is (the policy's own last answer otherwise).
    if let Some((j, _)) = reported {
        mem.current = Some(j);
    }
    if let Some((j, bps)) = reported
        && top_kbps > 0.0
    {
        steering.observe(mem, j, bps / 1000.0, top_kbps, &mut rng);
    }
    let order = steering.order(s.started.elapsed().as_secs_f64(), &views, mem, &mut rng);
    // Never empty: a player handed an empty list has nowhere to go.
    if order.is_empty() {
        return (0..t.servers.len()).collect();
    }
    order
}

/// The steering manifest for `order`, with clones of the edges the session's playlist did not
/// list.
fn answer(
    s: &SteerState,
    population: &str,
    session: Option<&String>,
    (order, listed): (Vec<usize>, Vec<usize>),
    dash: bool,
) -> Response {
    let t = &s.cfg.topology;
    let Some(i) = t.populations.iter().position(|p| p.name == population) else {
        return unknown_population();
    };
    let path = if dash {
        format!("{population}/dash")
    } else {
        population.to_string()
    };
    let reload = match session {
        Some(id) => format!("http://{}/steering/{path}?session={id}", s.addr),
        None => format!("http://{}/steering/{path}", s.addr),
    };
    let mut body = serde_json::json!({
        "VERSION": 1,
        "TTL": s.cfg.ttl,
        "RELOAD-URI": reload,
        "PATHWAY-PRIORITY": order.iter().map(|&j| t.servers[j].name.clone()).collect::<Vec<_>>(),
    });
    let clones: Vec<serde_json::Value> = match (session, listed.first()) {
        (Some(id), Some(&base)) => order
            .iter()
            .filter(|j| !listed.contains(j))
            .map(|&j| clone_of(s, i, id, base, j, dash))
            .collect(),
        _ => Vec::new(),
    };
    if !clones.is_empty() {
        body["PATHWAY-CLONES"] = serde_json::Value::Array(clones);
    }
    (
        [
            (header::CACHE_CONTROL, format!("max-age={}", s.cfg.ttl)),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".to_string()),
        ],
        axum::Json(body),
    )
        .into_response()
}

/// A session's URL prefix on edge `j`.
pub(super) fn session_base(s: &SteerState, i: usize, session: &str, j: usize) -> String {
    let t = &s.cfg.topology;
    format!(
        "http://{}/p/{}/{session}/",
        t.servers[j].addr, t.populations[i].name
    )
}

/// A `PATHWAY-CLONES` entry adding edge `j` as a copy of listed pathway `base`.
pub(super) fn clone_of(
    s: &SteerState,
    i: usize,
    session: &str,
    base: usize,
    j: usize,
    dash: bool,
) -> serde_json::Value {
    let t = &s.cfg.topology;
    let addr = t.servers[j].addr;
    let mut replacement = serde_json::json!({});
    if dash {
        // dash.js puts HOST, port included, in front of the base URL's path.
        replacement["HOST"] = addr.to_string().into();
    } else {
        replacement["HOST"] = addr.ip().to_string().into();
        if let Some(text) = s
            .cfg
            .media
            .as_ref()
            .and_then(|a| a.files.text(crate::media::HLS_MANIFEST))
        {
            let uris: serde_json::Map<String, serde_json::Value> =
                crate::media::per_variant_uris(text, &session_base(s, i, session, j))
                    .into_iter()
                    .map(|(k, v)| (k, v.into()))
                    .collect();
            replacement["PER-VARIANT-URIS"] = uris.into();
        }
    }
    serde_json::json!({
        "BASE-ID": t.servers[base].name,
        "ID": t.servers[j].name,
        "URI-REPLACEMENT": replacement,
    })
}

/// Opens a session and answers its multivariant playlist (`master.m3u8`) or MPD
/// (`manifest.mpd`).
pub(super) async fn play(
    State(s): State<Arc<SteerState>>,
    Path((population, file)): Path<(String, String)>,
) -> Response {
    let t = &s.cfg.topology;
    let Some(asset) = s.cfg.media.clone() else {
        return (
            StatusCode::NOT_FOUND,
            "no media asset on this steering server (--media)\n",
        )
            .into_response();
    };
    let Some(i) = t.populations.iter().position(|p| p.name == population) else {
        return unknown_population();
    };
    let dash = match file.as_str() {
        crate::media::HLS_MANIFEST => false,
        crate::media::DASH_MANIFEST => true,
        _ => {
            return (
                StatusCode::NOT_FOUND,
                format!(
                    "{} or {} expected\n",
                    crate::media::HLS_MANIFEST,
                    crate::media::DASH_MANIFEST
                ),
            )
                .into_response();
        }
    };
    // One critical section: the rate, the room, the serial and the entry agree.
    let now = Instant::now();
    let mut sessions = s.sessions.lock().expect("sessions lock");
    let allocated = {
        let n = t.servers.len();
        let plan = s.plan.lock().expect("plan lock");
        plan.thresholds[i * n..(i + 1) * n]
            .iter()
            .sum::<i64>()
            .max(1)
    };
    // New sessions per window: a multiple of the population's allocated streams (at least 1).
    let per_window = (s.cfg.sessions.rate * allocated as f64).max(1.0);
    let rate = per_window / s.cfg.window.as_secs_f64();
    let allowance = sessions.allowance[i].get_or_insert(Allowance::full(per_window, now));
    if !allowance.try_take(1.0, rate, per_window, now) {
        sessions.refused_rate[i] += 1;
        return refuse(
            StatusCode::TOO_MANY_REQUESTS,
            s.cfg.window,
            "this population opens no more sessions this window\n",
        );
    }
    // Sessions in use are never pushed out by newcomers; one idle for three TTLs may be.
    let idle = Duration::from_secs(3 * u64::from(s.cfg.ttl));
    if !sessions.make_room(s.cfg.sessions.max, idle, now) {
        sessions.refused_full[i] += 1;
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            Duration::from_secs(u64::from(s.cfg.ttl)),
            "every session is in use\n",
        );
    }
    let k = sessions.opened[i];
    sessions.opened[i] += 1;
    let expires = crate::session::unix_now().saturating_add(s.cfg.sessions.lifetime.as_secs());
    let id = crate::session::mint(&t.secret, &population, k, expires);
    let point = steering::session_point(k);
    // Never empty (`never_empty`): with nothing usable now, every edge is listed.
    let listed = order_for(&s, i, point, &[]);
    sessions.insert(
        id.clone(),
        Session {
            population: i,
            point,
            listed: listed.clone(),
            pathway: None,
            used: now,
            tick: 0,
            mem: Memory::new(point),
            reloads: 0,
            ended: false,
            throttle: None,
        },
    );
    drop(sessions);
    let pathways: Vec<Pathway> = listed
        .iter()
        .map(|&j| Pathway {
            id: t.servers[j].name.clone(),
            base: session_base(&s, i, &id, j),
        })
        .collect();
    let (body, kind) = if dash {
        let uri = format!("http://{}/steering/{population}/dash?session={id}", s.addr);
        (
            asset.dash(&pathways, &uri),
            crate::media::content_type(crate::media::DASH_MANIFEST),
        )
    } else {
        let uri = format!("http://{}/steering/{population}?session={id}", s.addr);
        (
            asset.hls(&pathways, &uri),
            crate::media::content_type(crate::media::HLS_MANIFEST),
        )
    };
    (
        [
            (header::CONTENT_TYPE, kind.to_string()),
            (header::CACHE_CONTROL, "no-store".to_string()),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".to_string()),
        ],
        body,
    )
        .into_response()
}

/// A refused `/play` or steering manifest: `code` with Retry-After in whole seconds (at least
/// 1), which a page's script may read across origins (Access-Control-Expose-Headers); not
/// stored (a refusal holds for this request only).
fn refuse(code: StatusCode, retry: Duration, why: &'static str) -> Response {
    let secs = retry.as_secs_f64().ceil().max(1.0) as u64;
    (
        code,
        [
            (header::RETRY_AFTER, secs.to_string()),
            (header::CACHE_CONTROL, "no-store".to_string()),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".to_string()),
            (
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                "Retry-After".to_string(),
            ),
        ],
        why,
    )
        .into_response()
}

/// 410 Gone: the session's steering has ended (HLS 4.4.6.6: the client must not reload the
/// steering manifest for the rest of the session; it plays on with the order it has). Not
/// stored: a 410 is cacheable by default (RFC 9110 15.1) and Chromium keeps one fresh forever,
/// so a player that asks again (Shaka does, a TTL later, with its own retry in between) would
/// be answered by its browser's cache and the server would never see it ask.
fn gone() -> Response {
    (
        StatusCode::GONE,
        [
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        "this session's steering has ended\n",
    )
        .into_response()
}

/// Ends a session or throttles its next reload (see [`super::Steer::session_control`]).
pub(super) fn session_control(
    s: &SteerState,
    id: &str,
    end: bool,
    retry_after: Option<u32>,
) -> bool {
    let mut sessions = s.sessions.lock().expect("sessions lock");
    let Some(x) = sessions.by_id.get_mut(id) else {
        return false;
    };
    x.ended |= end;
    if retry_after.is_some() {
        x.throttle = retry_after;
    }
    true
}

/// The query of `POST /internal/session`.
#[derive(Deserialize)]
pub(super) struct SessionControl {
    id: String,
    #[serde(default)]
    end: bool,
    retry_after: Option<u32>,
}

pub(super) async fn session_out(
    State(s): State<Arc<SteerState>>,
    h: axum::http::HeaderMap,
    q: Result<Query<SessionControl>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let authorised = crate::serve::has_secret(&h, &s.cfg.topology.secret);
    let q = match crate::serve::internal_query(
        authorised,
        q,
        "id=SESSION&end=true, or id=SESSION&retry_after=SECONDS (1 to 86400)",
    ) {
        Ok(q) => q,
        Err(refused) => return refused,
    };
    if q.retry_after.is_some_and(|r| !(1..=86_400).contains(&r)) {
        return (
            StatusCode::BAD_REQUEST,
            "retry_after: whole seconds from 1 to 86400 are allowed\n",
        )
            .into_response();
    }
    if !q.end && q.retry_after.is_none() {
        return (
            StatusCode::BAD_REQUEST,
            "say end=true or retry_after=SECONDS\n",
        )
            .into_response();
    }
    if session_control(&s, &q.id, q.end, q.retry_after) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        (StatusCode::NOT_FOUND, "no such session\n").into_response()
    }
}

/// The query of `POST /internal/edge`.
#[derive(Deserialize)]
pub(super) struct EdgeOut {
    name: String,
    out: bool,
}

pub(super) async fn edge_out(
    State(s): State<Arc<SteerState>>,
    h: axum::http::HeaderMap,
    q: Result<Query<EdgeOut>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let authorised = crate::serve::has_secret(&h, &s.cfg.topology.secret);
    let q = match crate::serve::internal_query(authorised, q, "name=EDGE&out=true|false") {
        Ok(q) => q,
        Err(refused) => return refused,
    };
    if set_out(&s, &q.name, q.out) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        (StatusCode::NOT_FOUND, "no such edge\n").into_response()
    }
}

/// The query of `GET /internal/thresholds`.
#[derive(Deserialize)]
pub(super) struct WhichEdge {
    edge: String,
}

/// An edge's thresholds by population, for an edge that asks when it starts.
pub(super) async fn edge_thresholds(
    State(s): State<Arc<SteerState>>,
    h: axum::http::HeaderMap,
    q: Result<Query<WhichEdge>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let authorised = crate::serve::has_secret(&h, &s.cfg.topology.secret);
    let q = match crate::serve::internal_query(authorised, q, "edge=NAME") {
        Ok(q) => q,
        Err(refused) => return refused,
    };
    let t = &s.cfg.topology;
    let Some(j) = t.servers.iter().position(|e| e.name == q.edge) else {
        return (StatusCode::NOT_FOUND, "no such edge\n").into_response();
    };
    let n = t.servers.len();
    let plan = s.plan.lock().expect("plan lock").thresholds.clone();
    let limits: serde_json::Map<String, serde_json::Value> = t
        .populations
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.clone(), plan[i * n + j].max(0).into()))
        .collect();
    axum::Json(limits).into_response()
}

pub(super) async fn allocation(State(s): State<Arc<SteerState>>) -> Response {
    let t = &s.cfg.topology;
    let plan = s.plan.lock().expect("plan lock").clone();
    let n = t.servers.len();
    // Sessions per population and pathway, as the players last reported (`_HLS_pathway`) within
    // three TTLs: the allocation as realised.
    let mut reported = vec![vec![0u64; n]; t.populations.len()];
    let fresh = Duration::from_secs(3 * u64::from(s.cfg.ttl));
    for x in s.sessions.lock().expect("sessions lock").by_id.values() {
        if let Some((j, at)) = x.pathway
            && at.elapsed() <= fresh
        {
            reported[x.population][j] += 1;
        }
    }
    axum::Json(serde_json::json!({
        "servers": t.servers.iter().map(|x| &x.name).collect::<Vec<_>>(),
        "populations": t.populations.iter().map(|x| &x.name).collect::<Vec<_>>(),
        "thresholds": plan.thresholds.chunks(n).collect::<Vec<_>>(),
        "demand": plan.demand,
        "blocking": *s.blocking.lock().expect("blocking lock"),
        "resolves": s.resolves.load(Relaxed),
        "sessions_reported": reported,
    }))
    .into_response()
}

/// Counts every answer of the steering server in its request metrics.
pub(super) async fn record(
    State(s): State<Arc<SteerState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let t = Instant::now();
    let r = next.run(req).await;
    s.metrics.record(r.status().as_u16(), t.elapsed());
    r
}

pub(super) async fn metrics(State(s): State<Arc<SteerState>>) -> Response {
    let t = &s.cfg.topology;
    let blocking = s.blocking.lock().expect("blocking lock").clone();
    let thresholds = s.plan.lock().expect("plan lock").thresholds.clone();
    let n = t.servers.len();
    let (held, refused, evicted) = {
        let x = s.sessions.lock().expect("sessions lock");
        let refused: Vec<(Vec<(&str, String)>, f64)> = t
            .populations
            .iter()
            .enumerate()
            .flat_map(|(i, p)| {
                [("rate", x.refused_rate[i]), ("full", x.refused_full[i])].map(|(why, k)| {
                    (
                        vec![("population", p.name.clone()), ("reason", why.to_string())],
                        k as f64,
                    )
                })
            })
            .collect();
        (x.by_id.len(), refused, x.evicted)
    };
    let families = [
        family(
            "cdnlab_steer_blocking",
            "Blocking per population in the last window.",
            Kind::GAUGE,
            t.populations
                .iter()
                .zip(blocking)
                .map(|(p, b)| (vec![("population", p.name.clone())], b)),
        ),
        family(
            "cdnlab_steer_threshold",
            "Streams of a population allowed at an edge.",
            Kind::GAUGE,
            t.populations.iter().enumerate().flat_map(|(i, p)| {
                let thresholds = &thresholds;
                t.servers.iter().enumerate().map(move |(j, e)| {
                    (
                        vec![("population", p.name.clone()), ("edge", e.name.clone())],
                        thresholds[i * n + j] as f64,
                    )
                })
            }),
        ),
        single(
            "cdnlab_steer_resolves_total",
            "Re-allocations made.",
            Kind::COUNTER,
            s.resolves.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_steer_report_errors_total",
            "Edge reports that could not be read.",
            Kind::COUNTER,
            s.report_errors.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_steer_reinstalls_total",
            "Edges whose report lacked the plan's thresholds, installed again.",
            Kind::COUNTER,
            s.reinstalls.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_steer_install_errors_total",
            "Threshold installations that failed.",
            Kind::COUNTER,
            s.install_errors.load(Relaxed) as f64,
        ),
        single(
            "cdnlab_steer_sessions",
            "Streaming sessions remembered.",
            Kind::GAUGE,
            held as f64,
        ),
        family(
            "cdnlab_steer_sessions_refused_total",
            "New sessions refused: over the population's rate (429), or every session in use (503).",
            Kind::COUNTER,
            refused,
        ),
        single(
            "cdnlab_steer_sessions_evicted_total",
            "Sessions forgotten, idle for three TTLs, to make room for a new one.",
            Kind::COUNTER,
            evicted as f64,
        ),
        single(
            "cdnlab_steer_solve_seconds",
            "Time of the last solve.",
            Kind::GAUGE,
            s.solve_micros.load(Relaxed) as f64 / 1e6,
        ),
    ];
    metrics::response(s.metrics.render(families.to_vec()))
}
