//! HTTP semantics of a GET for a stored representation, shared by the origin and the edge:
//! validators (`ETag`, `Last-Modified`), conditional requests (RFC 9110 section 13: 304 for a
//! matching `If-None-Match`, or for `If-Modified-Since` when there is no `If-None-Match`), and
//! single byte ranges (section 14: 206 with `Content-Range`, 416 when unsatisfiable, the whole
//! body when the range is malformed, has several parts, or `If-Range` does not match).

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use bytes::Bytes;
use std::ops::Range;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A representation's validators.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// A strong entity tag, quoted (`"..."`).
    pub etag: Option<String>,
    /// Whole seconds (HTTP dates have no finer resolution).
    pub last_modified: Option<SystemTime>,
}

impl Validators {
    /// The validators of an upstream response's headers (what is missing or malformed stays
    /// None).
    pub fn from_headers(h: &HeaderMap) -> Self {
        Validators {
            etag: h
                .get(header::ETAG)
                .and_then(|v| v.to_str().ok())
                .filter(|e| e.starts_with('"') && e.ends_with('"') && e.len() >= 2)
                .map(str::to_string),
            last_modified: h
                .get(header::LAST_MODIFIED)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| httpdate::parse_http_date(v).ok()),
        }
    }

    /// `time` truncated to whole seconds.
    pub fn seconds(time: SystemTime) -> SystemTime {
        let s = time
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        UNIX_EPOCH + Duration::from_secs(s)
    }

    /// Adds `ETag`, `Last-Modified` and `Accept-Ranges` to `h`.
    pub fn write(&self, h: &mut HeaderMap) {
        if let Some(v) = self
            .etag
            .as_deref()
            .and_then(|e| HeaderValue::from_str(e).ok())
        {
            h.insert(header::ETAG, v);
        }
        if let Some(t) = self.last_modified
            && let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(t))
        {
            h.insert(header::LAST_MODIFIED, v);
        }
        h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    }
}

/// What a shared cache may do with a response (RFC 9111), from its headers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Caching {
    /// Whether a shared cache may store it (section 3): not with `no-store` (5.2.2.5),
    /// `private` (5.2.2.7) or `Vary: *` (4.1), and, as nginx's `proxy_cache` does, not with
    /// `Set-Cookie` (a cookie set for one client is not to be handed to the others).
    pub storable: bool,
    /// Freshness lifetime (section 4.2.1): `s-maxage` (5.2.2.10), else `max-age` (5.2.2.1),
    /// else `Expires` minus `Date` (5.3), else a tenth of the time since `Last-Modified`
    /// (the heuristic of 4.2.2, capped at a day), else zero. `no-cache` (5.2.2.4) makes it
    /// zero: stored, and validated before each use.
    pub lifetime: Duration,
    /// The response's age when it arrived (the `Age` header, section 5.1).
    pub age: Duration,
    /// `must-revalidate` or `proxy-revalidate` (5.2.2.2, 5.2.2.8): never served stale.
    pub must_revalidate: bool,
    /// `stale-if-error` (RFC 5861 section 4): how long after it goes stale it may still be
    /// served when the origin fails.
    pub stale_if_error: Duration,
    /// The request headers the response varies on (section 4.1), lower case.
    pub vary: Vec<String>,
}

/// The longest heuristic freshness: a day.
const MAX_HEURISTIC: Duration = Duration::from_secs(86_400);

impl Caching {
    /// The caching rules of a response with headers `h`, received at `now`.
    pub fn of(h: &HeaderMap, now: SystemTime) -> Caching {
        // The directives, read in place (no allocation per response: the edge parses one per
        // miss, and small allocations freed at once fragment its heap).
        let directives = || {
            h.get_all(header::CACHE_CONTROL)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(|d| match d.split_once('=') {
                    Some((n, v)) => (n.trim(), Some(v.trim().trim_matches('"'))),
                    None => (d.trim(), None),
                })
        };
        let has = |name: &str| directives().any(|(n, _)| n.eq_ignore_ascii_case(name));
        let seconds = |name: &str| {
            directives()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .and_then(|(_, v)| v?.parse::<u64>().ok())
                .map(Duration::from_secs)
        };
        let date = |name: header::HeaderName| {
            h.get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| httpdate::parse_http_date(v).ok())
        };
        let vary: Vec<String> = h
            .get_all(header::VARY)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|f| f.trim().to_ascii_lowercase())
            .filter(|f| !f.is_empty())
            .collect();
        let storable = !has("no-store")
            && !has("private")
            && !h.contains_key(header::SET_COOKIE)
            && !vary.iter().any(|f| f == "*");
        let served = date(header::DATE).unwrap_or(now);
        let lifetime = if has("no-cache") {
            Duration::ZERO
        } else if let Some(s) = seconds("s-maxage").or_else(|| seconds("max-age")) {
            s
        } else if h.contains_key(header::EXPIRES) {
            // An invalid date (such as "0") means already expired (section 5.3).
            date(header::EXPIRES)
                .and_then(|e| e.duration_since(served).ok())
                .unwrap_or_default()
        } else if let Some(modified) = date(header::LAST_MODIFIED) {
            (served.duration_since(modified).unwrap_or_default() / 10).min(MAX_HEURISTIC)
        } else {
            Duration::ZERO
        };
        let age = h
            .get(header::AGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs)
            .unwrap_or_default();
        Caching {
            storable,
            lifetime,
            age,
            must_revalidate: has("must-revalidate") || has("proxy-revalidate"),
            stale_if_error: seconds("stale-if-error").unwrap_or_default(),
            vary,
        }
    }
}

/// The request's conditional headers to validate a stored response with validators `v`
/// (RFC 9111 section 4.3.1): `If-None-Match` with its entity tag, else `If-Modified-Since`
/// with its `Last-Modified`.
pub fn validation(v: &Validators) -> Option<(header::HeaderName, String)> {
    if let Some(e) = &v.etag {
        return Some((header::IF_NONE_MATCH, e.clone()));
    }
    v.last_modified
        .map(|t| (header::IF_MODIFIED_SINCE, httpdate::fmt_http_date(t)))
}

/// What to answer to a GET for a representation of `len` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// 304, no body.
    NotModified,
    /// 200 with the whole body.
    Whole,
    /// 206 with these bytes.
    Part(Range<usize>),
    /// 416 with `Content-Range: bytes */len`.
    Unsatisfiable,
}

impl Plan {
    /// The plan for a request with headers `req`.
    pub fn of(req: &HeaderMap, v: &Validators, len: usize) -> Plan {
        if not_modified(req, v) {
            return Plan::NotModified;
        }
        let Some(range) = req.get(header::RANGE).and_then(|r| r.to_str().ok()) else {
            return Plan::Whole;
        };
        if !if_range_holds(req, v) {
            return Plan::Whole;
        }
        match byte_range(range, len) {
            Some(Some(r)) => Plan::Part(r),
            Some(None) => Plan::Unsatisfiable,
            None => Plan::Whole,
        }
    }

    /// The status, and the `Content-Range` header where there is one.
    pub fn status(&self, len: usize) -> (StatusCode, Option<String>) {
        match self {
            Plan::NotModified => (StatusCode::NOT_MODIFIED, None),
            Plan::Whole => (StatusCode::OK, None),
            Plan::Part(r) => (
                StatusCode::PARTIAL_CONTENT,
                Some(format!("bytes {}-{}/{len}", r.start, r.end - 1)),
            ),
            Plan::Unsatisfiable => (
                StatusCode::RANGE_NOT_SATISFIABLE,
                Some(format!("bytes */{len}")),
            ),
        }
    }

    /// The bytes of the body to send.
    pub fn body(&self, len: usize) -> Range<usize> {
        match self {
            Plan::Whole => 0..len,
            Plan::Part(r) => r.clone(),
            Plan::NotModified | Plan::Unsatisfiable => 0..0,
        }
    }
}

/// The answer to a GET of `body` with validators `v`: the status, the headers that go with it
/// (validators, `Accept-Ranges`, `Content-Range`) and the bytes to send.
pub fn answer(req: &HeaderMap, v: &Validators, body: &Bytes) -> (StatusCode, HeaderMap, Bytes) {
    let plan = Plan::of(req, v, body.len());
    let (status, range) = plan.status(body.len());
    let mut h = HeaderMap::new();
    v.write(&mut h);
    if let Some(r) = range.and_then(|r| HeaderValue::from_str(&r).ok()) {
        h.insert(header::CONTENT_RANGE, r);
    }
    (status, h, body.slice(plan.body(body.len())))
}

/// Whether the request's preconditions say the client's copy is current.
fn not_modified(req: &HeaderMap, v: &Validators) -> bool {
    if let Some(inm) = req.get(header::IF_NONE_MATCH) {
        // Weak comparison (section 13.1.2): W/ prefixes ignored; `*` matches any current
        // representation.
        let strip = |t: &str| t.strip_prefix("W/").unwrap_or(t).to_string();
        return inm.to_str().is_ok_and(|list| {
            list.split(',')
                .map(str::trim)
                .any(|t| t == "*" || v.etag.as_deref().is_some_and(|e| strip(t) == strip(e)))
        });
    }
    match (
        req.get(header::IF_MODIFIED_SINCE)
            .and_then(|d| d.to_str().ok())
            .and_then(|d| httpdate::parse_http_date(d).ok()),
        v.last_modified,
    ) {
        (Some(since), Some(modified)) => modified <= since,
        _ => false,
    }
}

/// Whether `If-Range`, if present, matches (strong comparison, or the exact date).
fn if_range_holds(req: &HeaderMap, v: &Validators) -> bool {
    let Some(ir) = req.get(header::IF_RANGE).and_then(|x| x.to_str().ok()) else {
        return true;
    };
    if ir.starts_with('"') {
        return v.etag.as_deref() == Some(ir);
    }
    httpdate::parse_http_date(ir)
        .ok()
        .is_some_and(|d| v.last_modified == Some(d))
}

/// One byte range of a representation of `len` bytes: None if the header is malformed or has
/// several ranges (then ignored), Some(None) if unsatisfiable.
fn byte_range(spec: &str, len: usize) -> Option<Option<Range<usize>>> {
    let set = spec.trim().strip_prefix("bytes=")?;
    if set.contains(',') {
        return None;
    }
    let (a, b) = set.trim().split_once('-')?;
    let num = |s: &str| -> Option<Option<u64>> {
        let s = s.trim();
        if s.is_empty() {
            return Some(None);
        }
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        // Digits too many for u64: a position past any body.
        Some(Some(s.parse().unwrap_or(u64::MAX)))
    };
    let len64 = len as u64;
    let r = match (num(a)?, num(b)?) {
        (Some(first), last) => {
            if last.is_some_and(|l| l < first) {
                return None;
            }
            if first >= len64 {
                return Some(None);
            }
            let end = last.map_or(len64, |l| l.saturating_add(1).min(len64));
            first..end
        }
        (None, Some(suffix)) => {
            if suffix == 0 || len == 0 {
                return Some(None);
            }
            len64.saturating_sub(suffix)..len64
        }
        (None, None) => return None,
    };
    Some(Some(r.start as usize..r.end as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    fn validators() -> Validators {
        Validators {
            etag: Some("\"abc\"".into()),
            last_modified: Some(UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
        }
    }

    #[test]
    fn ranges_as_rfc_9110_section_14() {
        let v = validators();
        let plan = |r: &str| Plan::of(&req(&[("range", r)]), &v, 1000);
        assert_eq!(plan("bytes=0-99"), Plan::Part(0..100));
        assert_eq!(plan("bytes=900-"), Plan::Part(900..1000));
        assert_eq!(plan("bytes=-100"), Plan::Part(900..1000));
        assert_eq!(plan("bytes=-5000"), Plan::Part(0..1000));
        assert_eq!(plan("bytes=990-5000"), Plan::Part(990..1000));
        assert_eq!(plan("bytes=999-999"), Plan::Part(999..1000));
        assert_eq!(plan("bytes=1000-"), Plan::Unsatisfiable);
        assert_eq!(plan("bytes=-0"), Plan::Unsatisfiable);
        assert_eq!(plan("bytes=99999999999999999999999-"), Plan::Unsatisfiable);
        // Malformed or several ranges: ignored.
        for bad in [
            "bytes=5-1",
            "bytes=a-b",
            "items=0-1",
            "bytes=-",
            "bytes=0-1,5-9",
        ] {
            assert_eq!(plan(bad), Plan::Whole, "{bad}");
        }
        assert_eq!(
            Plan::Part(0..100).status(1000),
            (StatusCode::PARTIAL_CONTENT, Some("bytes 0-99/1000".into()))
        );
        assert_eq!(
            Plan::Unsatisfiable.status(1000),
            (
                StatusCode::RANGE_NOT_SATISFIABLE,
                Some("bytes */1000".into())
            )
        );
        // If-Range: the range only for the same representation.
        let with = |ir: &str| Plan::of(&req(&[("range", "bytes=0-9"), ("if-range", ir)]), &v, 1000);
        assert_eq!(with("\"abc\""), Plan::Part(0..10));
        assert_eq!(with("\"other\""), Plan::Whole);
        assert_eq!(with("Tue, 14 Nov 2023 22:13:20 GMT"), Plan::Part(0..10));
        assert_eq!(with("Tue, 14 Nov 2023 22:13:21 GMT"), Plan::Whole);
    }

    #[test]
    fn caching_as_rfc_9111() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let of = |pairs: &[(&str, &str)]| Caching::of(&req(pairs), now);
        let date = "Tue, 14 Nov 2023 22:13:20 GMT"; // = now
        let plus_60 = "Tue, 14 Nov 2023 22:14:20 GMT";
        let minus_1000 = "Tue, 14 Nov 2023 21:56:40 GMT";
        // 5.2.2.1, 5.2.2.10: s-maxage wins for a shared cache.
        assert_eq!(
            of(&[("cache-control", "max-age=100")]).lifetime,
            Duration::from_secs(100)
        );
        assert_eq!(
            of(&[("cache-control", "max-age=100, s-maxage=7")]).lifetime,
            Duration::from_secs(7)
        );
        // 5.3: Expires minus Date; an invalid Expires is already expired; max-age wins.
        assert_eq!(
            of(&[("date", date), ("expires", plus_60)]).lifetime,
            Duration::from_secs(60)
        );
        assert_eq!(of(&[("expires", "0")]).lifetime, Duration::ZERO);
        assert_eq!(
            of(&[
                ("date", date),
                ("expires", plus_60),
                ("cache-control", "max-age=5")
            ])
            .lifetime,
            Duration::from_secs(5)
        );
        // 4.2.2: a tenth of the time since Last-Modified.
        assert_eq!(
            of(&[("date", date), ("last-modified", minus_1000)]).lifetime,
            Duration::from_secs(100)
        );
        // 5.2.2.4: no-cache is stored, and validated every time.
        let c = of(&[("cache-control", "no-cache, max-age=100")]);
        assert!(c.storable && c.lifetime.is_zero());
        // 5.2.2.5, 5.2.2.7, 4.1, and Set-Cookie: not stored.
        for h in [
            &[("cache-control", "no-store")][..],
            &[("cache-control", "Private")][..],
            &[("vary", "*")][..],
            &[("set-cookie", "id=1")][..],
            &[
                ("cache-control", "private, no-store"),
                ("set-cookie", "s=1"),
            ][..],
        ] {
            assert!(!of(h).storable, "{h:?}");
        }
        let c = of(&[
            (
                "cache-control",
                "max-age=1, must-revalidate, stale-if-error=\"30\"",
            ),
            ("vary", "Accept-Language, accept-encoding"),
            ("age", "3"),
        ]);
        assert!(c.storable && c.must_revalidate);
        assert_eq!(c.stale_if_error, Duration::from_secs(30));
        assert_eq!(c.age, Duration::from_secs(3));
        assert_eq!(c.vary, ["accept-language", "accept-encoding"]);
        // 4.3.1: validation by entity tag first, else by date.
        assert_eq!(
            validation(&validators()),
            Some((header::IF_NONE_MATCH, "\"abc\"".to_string()))
        );
        let by_date = Validators {
            etag: None,
            ..validators()
        };
        assert_eq!(
            validation(&by_date),
            Some((header::IF_MODIFIED_SINCE, date.to_string()))
        );
    }

    #[test]
    fn conditionals_as_rfc_9110_section_13() {
        let v = validators();
        let plan = |h: &[(&str, &str)]| Plan::of(&req(h), &v, 10);
        assert_eq!(plan(&[("if-none-match", "\"abc\"")]), Plan::NotModified);
        assert_eq!(
            plan(&[("if-none-match", "\"x\", W/\"abc\"")]),
            Plan::NotModified
        );
        assert_eq!(plan(&[("if-none-match", "*")]), Plan::NotModified);
        assert_eq!(plan(&[("if-none-match", "\"x\"")]), Plan::Whole);
        // 2023-11-14 22:13:20 is the representation's time.
        let date = "Tue, 14 Nov 2023 22:13:20 GMT";
        let before = "Tue, 14 Nov 2023 22:13:19 GMT";
        assert_eq!(plan(&[("if-modified-since", date)]), Plan::NotModified);
        assert_eq!(plan(&[("if-modified-since", before)]), Plan::Whole);
        assert_eq!(plan(&[("if-modified-since", "yesterday")]), Plan::Whole);
        // If-None-Match wins over If-Modified-Since.
        assert_eq!(
            plan(&[("if-none-match", "\"x\""), ("if-modified-since", date)]),
            Plan::Whole
        );
        // Without validators only `*` says "not modified".
        let none = Validators::default();
        assert_eq!(
            Plan::of(&req(&[("if-none-match", "*")]), &none, 10),
            Plan::NotModified
        );
        assert_eq!(
            Plan::of(&req(&[("if-none-match", "\"abc\"")]), &none, 10),
            Plan::Whole
        );
        let mut h = HeaderMap::new();
        v.write(&mut h);
        assert_eq!(h["etag"], "\"abc\"");
        assert_eq!(h["last-modified"], date);
        assert_eq!(Validators::from_headers(&h), v);
    }
}
