//! The edge as a shared cache (RFC 9111), one test per rule, against a scripted origin whose
//! object `id` answers with the headers of that rule. The second hardening round found an
//! origin response with `Cache-Control: private, no-store` and `Set-Cookie` stored and served
//! as a hit to everyone.

mod common;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cdnlab_live::serve::Limits;
use cdnlab_live::serve::metrics::Metrics;
use common::*;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The origin's requests by object, with the conditional header each carried; and a switch
/// that makes it fail.
#[derive(Default)]
struct Script {
    seen: Mutex<HashMap<u32, Vec<Option<String>>>>,
    failing: AtomicBool,
}

impl Script {
    fn requests(&self, id: u32) -> Vec<Option<String>> {
        self.seen
            .lock()
            .unwrap()
            .get(&id)
            .cloned()
            .unwrap_or_default()
    }
}

async fn scripted(State(s): State<Arc<Script>>, Path(id): Path<u32>, req: HeaderMap) -> Response {
    let conditional = ["if-none-match", "if-modified-since"]
        .iter()
        .find_map(|h| req.get(*h).map(|v| format!("{h}: {}", v.to_str().unwrap())));
    let n = {
        let mut seen = s.seen.lock().unwrap();
        let v = seen.entry(id).or_default();
        v.push(conditional.clone());
        v.len()
    };
    if s.failing.load(Relaxed) {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let now = std::time::SystemTime::now();
    let date = httpdate::fmt_http_date(now);
    let etag = format!("\"v{id}\"");
    let validated = conditional.as_deref() == Some(&format!("if-none-match: {etag}"));
    let mut h: Vec<(header::HeaderName, String)> = vec![(header::DATE, date.clone())];
    let mut body = format!("object {id}, answer {n}");
    match id {
        1 => {
            h.push((header::CACHE_CONTROL, "private, no-store".into()));
            h.push((header::SET_COOKIE, format!("session={n}")));
        }
        2 => h.push((header::CACHE_CONTROL, "no-store".into())),
        3 => {
            h.push((header::CACHE_CONTROL, "max-age=60".into()));
            h.push((header::SET_COOKIE, "a=1".into()));
        }
        4 => h.push((header::CACHE_CONTROL, "max-age=1".into())),
        5 => h.push((header::CACHE_CONTROL, "max-age=100, s-maxage=1".into())),
        6 => {
            // No entity tag: validated by date.
            let modified = httpdate::fmt_http_date(now - Duration::from_secs(3600));
            if req.get("if-modified-since").is_some() {
                return StatusCode::NOT_MODIFIED.into_response();
            }
            h.push((
                header::EXPIRES,
                httpdate::fmt_http_date(now + Duration::from_secs(1)),
            ));
            h.push((header::LAST_MODIFIED, modified));
        }
        7 => {
            h.push((header::CACHE_CONTROL, "max-age=60".into()));
            h.push((header::VARY, "Accept-Language".into()));
            body = format!(
                "in {}",
                req.get("accept-language")
                    .map_or("none", |v| v.to_str().unwrap())
            );
        }
        8 => {
            h.push((header::CACHE_CONTROL, "max-age=60".into()));
            h.push((header::VARY, "*".into()));
        }
        9 => h.push((header::CACHE_CONTROL, "max-age=1, stale-if-error=60".into())),
        10 => h.push((header::CACHE_CONTROL, "max-age=1".into())),
        11 => h.push((header::CACHE_CONTROL, "no-cache".into())),
        _ => return StatusCode::NOT_FOUND.into_response(),
    }
    if id != 6 {
        h.push((header::ETAG, etag));
    }
    let mut r = if validated {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        body.into_response()
    };
    for (k, v) in h {
        r.headers_mut().append(k, v.parse().unwrap());
    }
    r
}

async fn setup() -> (
    Arc<Script>,
    cdnlab_live::serve::Running,
    cdnlab_live::edge::Edge,
) {
    let script = Arc::new(Script::default());
    let router = axum::Router::new()
        .route("/content/{id}", axum::routing::get(scripted))
        .with_state(script.clone());
    let o = cdnlab_live::serve::spawn(
        listener().await,
        router,
        Limits::default(),
        &Metrics::default(),
    )
    .unwrap();
    let e = edge(edge_config(o.addr)).await;
    (script, o, e)
}

/// (status, Cache-Status, Set-Cookie, body) of `GET /content/{id}` with `headers`.
async fn at(e: SocketAddr, id: u32, headers: &[(&str, &str)]) -> (u16, String, String, String) {
    let mut r = client().get(format!("http://{e}/content/{id}"));
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let r = r.send().await.unwrap();
    let h = |n: &str| {
        r.headers()
            .get(n)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default()
    };
    let (status, cs, cookie) = (r.status().as_u16(), h("cache-status"), h("set-cookie"));
    (status, cs, cookie, r.text().await.unwrap())
}

/// The finding, and sections 5.2.2.5 (no-store) and 5.2.2.7 (private: a shared cache must not
/// store it): each client gets its own answer, with its own cookie, and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_no_store_and_set_cookie_are_never_shared() {
    let (script, o, e) = setup().await;
    let a = e.server.addr;
    let first = at(a, 1, &[]).await;
    let second = at(a, 1, &[]).await;
    assert_eq!(
        (first.0, first.1.as_str(), first.2.as_str()),
        (200, "cdnlab; fwd=miss", "session=1")
    );
    assert_eq!(
        (second.1.as_str(), second.2.as_str()),
        ("cdnlab; fwd=miss", "session=2")
    );
    assert_eq!(second.3, "object 1, answer 2");
    assert_eq!(script.requests(1).len(), 2);
    assert!(!e.holds(1));
    for _ in 0..2 {
        assert_eq!(at(a, 2, &[]).await.1, "cdnlab; fwd=miss"); // no-store alone
    }
    assert_eq!(script.requests(2).len(), 2);
    stop_all([e.server, o]).await;
}

/// Set-Cookie: not stored, as nginx's proxy_cache does (a cookie set for one client is not
/// for the others; RFC 9111 section 7.3 on privacy), even when fresh for a minute.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_setting_a_cookie_is_not_stored() {
    let (script, o, e) = setup().await;
    for _ in 0..2 {
        let (_, cs, cookie, _) = at(e.server.addr, 3, &[]).await;
        assert_eq!((cs.as_str(), cookie.as_str()), ("cdnlab; fwd=miss", "a=1"));
    }
    assert_eq!(script.requests(3).len(), 2);
    stop_all([e.server, o]).await;
}

/// Sections 5.2.2.1 (max-age), 4.3.1 to 4.3.4 (validation with If-None-Match; a 304 makes the
/// stored response fresh again), and 5.2.2.10 (s-maxage wins over max-age in a shared cache).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_age_and_s_maxage_then_validation_by_entity_tag() {
    let (script, o, e) = setup().await;
    let a = e.server.addr;
    for id in [4, 5] {
        assert_eq!(at(a, id, &[]).await.1, "cdnlab; fwd=miss; stored");
        assert_eq!(at(a, id, &[]).await.1, "cdnlab; hit");
    }
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    for id in [4, 5] {
        let (code, cs, _, body) = at(a, id, &[]).await;
        assert_eq!(
            (code, cs.as_str()),
            (200, "cdnlab; fwd=stale; fwd-status=304")
        );
        assert_eq!(body, format!("object {id}, answer 1"));
        assert_eq!(at(a, id, &[]).await.1, "cdnlab; hit", "fresh again");
        let etag = format!("if-none-match: \"v{id}\"");
        assert_eq!(script.requests(id), [None, Some(etag)]);
    }
    stop_all([e.server, o]).await;
}

/// Section 5.3 (Expires, relative to Date) and 4.3.1 (validation by If-Modified-Since when
/// there is no entity tag).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expires_then_validation_by_date() {
    let (script, o, e) = setup().await;
    let a = e.server.addr;
    assert_eq!(at(a, 6, &[]).await.1, "cdnlab; fwd=miss; stored");
    assert_eq!(at(a, 6, &[]).await.1, "cdnlab; hit");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let (_, cs, _, body) = at(a, 6, &[]).await;
    assert_eq!(
        (cs.as_str(), body.as_str()),
        ("cdnlab; fwd=stale; fwd-status=304", "object 6, answer 1")
    );
    let seen = script.requests(6);
    assert!(
        seen.len() == 2
            && seen[1]
                .as_deref()
                .is_some_and(|c| c.starts_with("if-modified-since: ")),
        "{seen:?}"
    );
    stop_all([e.server, o]).await;
}

/// Section 4.1: a stored response is used only for requests whose headers named by its Vary
/// match those of the request that fetched it; `Vary: *` is never reused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vary_selects_and_vary_star_is_not_stored() {
    let (script, o, e) = setup().await;
    let a = e.server.addr;
    let en = [("accept-language", "en")];
    let fr = [("accept-language", "fr")];
    assert_eq!(at(a, 7, &en).await.3, "in en");
    let (_, cs, _, body) = at(a, 7, &en).await;
    assert_eq!((cs.as_str(), body.as_str()), ("cdnlab; hit", "in en"));
    let (_, cs, _, body) = at(a, 7, &fr).await;
    assert_eq!(body, "in fr", "{cs}");
    assert_ne!(cs, "cdnlab; hit");
    assert_eq!(script.requests(7).len(), 2);
    for _ in 0..2 {
        assert_eq!(at(a, 8, &[]).await.1, "cdnlab; fwd=miss");
    }
    assert_eq!(script.requests(8).len(), 2);
    stop_all([e.server, o]).await;
}

/// RFC 5861 section 4 (stale-if-error): a stale response may be served while the origin fails,
/// within the window; without it, the failure is passed on (502).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_if_error_serves_a_stale_response_when_the_origin_fails() {
    let (script, o, e) = setup().await;
    let a = e.server.addr;
    for id in [9, 10] {
        assert_eq!(at(a, id, &[]).await.0, 200);
    }
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    script.failing.store(true, Relaxed);
    let (code, cs, _, body) = at(a, 9, &[]).await;
    assert_eq!(
        (code, cs.as_str()),
        (200, "cdnlab; fwd=stale; fwd-status=500")
    );
    assert_eq!(body, "object 9, answer 1");
    let (code, cs, _, _) = at(a, 10, &[]).await;
    assert_eq!(
        (code, cs.as_str()),
        (502, "cdnlab; fwd=stale; fwd-status=500")
    );
    stop_all([e.server, o]).await;
}

/// Section 5.2.2.4 (no-cache): stored, and validated with the origin before every use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_cache_is_validated_every_time() {
    let (script, o, e) = setup().await;
    let a = e.server.addr;
    assert_eq!(at(a, 11, &[]).await.1, "cdnlab; fwd=miss; stored");
    for _ in 0..3 {
        let (_, cs, _, body) = at(a, 11, &[]).await;
        assert_eq!(
            (cs.as_str(), body.as_str()),
            ("cdnlab; fwd=stale; fwd-status=304", "object 11, answer 1")
        );
    }
    assert_eq!(script.requests(11).len(), 4);
    stop_all([e.server, o]).await;
}
