//! CTA-5004 Common Media Client Data (CMCD): what a player says about itself with every
//! request, as a query parameter (`?CMCD=` and the percent-encoded data) or in four headers
//! (`CMCD-Object`, `CMCD-Request`, `CMCD-Session`, `CMCD-Status`). The data is an RFC 8941
//! Dictionary (`br=3200,bl=21300,bs,ot=v,sid="..."`), parsed here with the `sfv` crate by
//! RFC 9651, RFC 8941's successor, which adds dates (CML takes them) and display strings
//! (CML refuses them, and so does [`decode`]).
//!
//! Two layers, so that each can be checked on its own:
//! - [`decode`] turns a string into its keys and values, as SVTA's Common Media Library
//!   (`@svta/cml-cmcd`'s `decodeCmcd`) does: the whole string is refused when it is not a
//!   Dictionary (RFC 8941 §4.2.2), a repeated key keeps its last value. The test
//!   `crates/cdnlab/tests/cmcd.rs` runs both on the same strings; they differ only where CML
//!   is laxer than RFC 8941: it takes a tab wherever it takes a space (the RFC allows one
//!   only between members, §4.2.2) and any character in a string (the RFC only printable
//!   ASCII, §3.3.3). Here such data is refused.
//! - [`Report::from_pairs`] keeps the keys a steering decision reads, each checked for its
//!   type and range; a value of the wrong type or out of range is dropped and counted
//!   ([`Report::dropped`]), never trusted. Unknown and custom (`com.example-x`) keys are
//!   ignored.
//!
//! A string longer than [`MAX_BYTES`] is refused before parsing ([`Refused::Oversized`]).
//! Nothing here identifies a session: the `sid` a player sends is its own claim, and the
//! aggregates ([`super::tally`]) count each session under the name the CDN gave it.

use std::fmt;

/// The longest CMCD data accepted, in bytes (all four headers together, or the query
/// parameter after percent-decoding). hls.js, dash.js and Shaka send 100 to 300 bytes; the
/// longest a player could mean, with a relative `nor` URL and both ids at their longest
/// (CTA-5004: `cid` at most 128 characters, `sid` at most 64), stays under 1 KiB.
pub const MAX_BYTES: usize = 2048;

/// The headers CTA-5004 spreads the keys over (header transmission mode).
pub const HEADERS: [&str; 4] = ["cmcd-object", "cmcd-request", "cmcd-session", "cmcd-status"];

/// One decoded value: RFC 9651's bare items and inner lists, without parameters (CMCD gives
/// none to the keys it defines).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Integer(i64),
    Decimal(f64),
    String(String),
    Token(String),
    Boolean(bool),
    Bytes(Vec<u8>),
    /// RFC 9651's date, in seconds since the epoch.
    Date(i64),
    List(Vec<Value>),
}

/// As JSON: numbers, strings (a token too), booleans and arrays as themselves; a byte
/// sequence `{"bytes": [...]}`, a date `{"date": seconds}` (the shape SVTA's CML decodings
/// are compared in, player/cmcd-decode.mjs).
impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Value::Integer(i) => s.serialize_i64(*i),
            Value::Decimal(d) => s.serialize_f64(*d),
            Value::String(x) | Value::Token(x) => s.serialize_str(x),
            Value::Boolean(b) => s.serialize_bool(*b),
            Value::Bytes(b) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("bytes", b)?;
                m.end()
            }
            Value::Date(d) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("date", d)?;
                m.end()
            }
            Value::List(l) => l.serialize(s),
        }
    }
}

/// Why CMCD data was refused as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Longer than [`MAX_BYTES`].
    Oversized { bytes: usize },
    /// Not an RFC 8941 Dictionary, not valid percent-encoding, or the `CMCD` query parameter
    /// given twice.
    Malformed,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Oversized { bytes } => {
                write!(f, "CMCD data of {bytes} bytes (at most {MAX_BYTES})")
            }
            Refused::Malformed => f.write_str("CMCD data that is not an RFC 8941 dictionary"),
        }
    }
}

/// The keys and values of CMCD data `s`, in order (a repeated key once, with its last value,
/// where the first stood).
pub fn decode(s: &str) -> Result<Vec<(String, Value)>, Refused> {
    if s.len() > MAX_BYTES {
        return Err(Refused::Oversized { bytes: s.len() });
    }
    // An HTTP field value has no leading or trailing whitespace (RFC 9110 §5.5); a query
    // parameter's may, and CML trims it too.
    let s = s.trim_matches([' ', '\t']);
    let dict: sfv::Dictionary = sfv::Parser::new(s)
        .parse()
        .map_err(|_| Refused::Malformed)?;
    let mut pairs = Vec::with_capacity(dict.len());
    for (k, v) in &dict {
        let value = match v {
            sfv::ListEntry::Item(i) => bare(&i.bare_item),
            sfv::ListEntry::InnerList(l) => l
                .items
                .iter()
                .map(|i| bare(&i.bare_item))
                .collect::<Option<_>>()
                .map(Value::List),
        };
        pairs.push((k.as_str().to_owned(), value.ok_or(Refused::Malformed)?));
    }
    Ok(pairs)
}

/// A bare item's value; `None` for a display string, which CML refuses (CMCD predates them).
fn bare(b: &sfv::BareItem) -> Option<Value> {
    Some(match b {
        sfv::BareItem::Integer(i) => Value::Integer(i64::from(*i)),
        sfv::BareItem::Decimal(d) => Value::Decimal(f64::from(*d)),
        sfv::BareItem::String(s) => Value::String(s.as_str().to_owned()),
        sfv::BareItem::Token(t) => Value::Token(t.as_str().to_owned()),
        sfv::BareItem::Boolean(b) => Value::Boolean(*b),
        sfv::BareItem::ByteSequence(b) => Value::Bytes(b.clone()),
        sfv::BareItem::Date(d) => Value::Date(i64::from(d.unix_seconds())),
        sfv::BareItem::DisplayString(_) => return None,
    })
}

/// The CMCD data in a request's query string (without the `?`), percent-decoded: the value of
/// its `CMCD` parameter, `Ok(None)` when it has none. Given twice, the data is refused (a
/// browser's `URLSearchParams.get`, and so CML's `fromCmcdQuery`, would take the first).
pub fn query_data(query: &str) -> Result<Option<String>, Refused> {
    if query.len() > 3 * MAX_BYTES + 64 {
        // Even fully percent-encoded, data within the limit is shorter.
        return Err(Refused::Oversized { bytes: query.len() });
    }
    let mut found = None;
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        if k == "CMCD" {
            if found.is_some() {
                return Err(Refused::Malformed);
            }
            found = Some(v.into_owned());
        }
    }
    Ok(found)
}

/// CTA-5004's object types (`ot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    Manifest,
    Audio,
    Video,
    Muxed,
    Init,
    Caption,
    TimedText,
    Key,
    Other,
}

impl Object {
    fn parse(t: &str) -> Option<Object> {
        Some(match t {
            "m" => Object::Manifest,
            "a" => Object::Audio,
            "v" => Object::Video,
            "av" => Object::Muxed,
            "i" => Object::Init,
            "c" => Object::Caption,
            "tt" => Object::TimedText,
            "k" => Object::Key,
            "o" => Object::Other,
            _ => return None,
        })
    }

    /// A media segment: what a player's buffer is made of.
    pub fn is_media(self) -> bool {
        matches!(self, Object::Audio | Object::Video | Object::Muxed)
    }
}

/// The largest rate accepted in kbps (`br`, `mtp`, `rtp`, `tb`): 100 Gbit/s.
pub const MAX_KBPS: i64 = 100_000_000;
/// The longest time accepted in ms (`bl`, `d`, `dl`): a day.
pub const MAX_MS: i64 = 86_400_000;
/// CTA-5004's longest `sid`, in characters.
pub const MAX_SID: usize = 64;
/// CTA-5004's longest `cid`, in characters.
pub const MAX_CID: usize = 128;

/// What one request's CMCD says that a steering decision reads, each value checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// `br`: the encoded bitrate of the object, kbps.
    pub bitrate_kbps: Option<u32>,
    /// `bl`: the buffer ahead of the playhead, ms.
    pub buffer_ms: Option<u32>,
    /// `mtp`: the throughput the player measured, kbps.
    pub throughput_kbps: Option<u32>,
    /// `d`: the object's playback duration, ms.
    pub duration_ms: Option<u32>,
    /// `dl`: the deadline for the object (buffer divided by playback rate), ms.
    pub deadline_ms: Option<u32>,
    /// `rtp`: the throughput the player asks the CDN for, kbps.
    pub requested_kbps: Option<u32>,
    /// `tb`: the highest bitrate the player could play, kbps.
    pub top_kbps: Option<u32>,
    /// `ot`: what was requested.
    pub object: Option<Object>,
    /// `bs`: the buffer ran empty since the last request.
    pub starved: bool,
    /// `su`: the player is starting up or seeking (buffer not yet full).
    pub startup: bool,
    /// `sid`: the session id the player claims.
    pub session: Option<String>,
    /// `cid`: the content id.
    pub content: Option<String>,
    /// Keys of a known name whose value had the wrong type or was out of range.
    pub dropped: u32,
}

impl Report {
    /// The report of decoded `pairs` ([`decode`]). CMCD v2 sends some keys as inner lists, one
    /// value per media type: `bl` counts as its smallest (the buffer that runs out first),
    /// `br` and `tb` as their sum (what the player fetches in all).
    pub fn from_pairs(pairs: &[(String, Value)]) -> Report {
        let mut r = Report::default();
        for (key, value) in pairs {
            let ok = match key.as_str() {
                "br" => set(&mut r.bitrate_kbps, rate(value, Sum)),
                "bl" => set(&mut r.buffer_ms, time(value, Min)),
                "mtp" => set(&mut r.throughput_kbps, rate(value, One)),
                "d" => set(&mut r.duration_ms, time(value, One)),
                "dl" => set(&mut r.deadline_ms, time(value, Min)),
                "rtp" => set(&mut r.requested_kbps, rate(value, One)),
                "tb" => set(&mut r.top_kbps, rate(value, Sum)),
                "ot" => set(
                    &mut r.object,
                    match value {
                        Value::Token(t) => Object::parse(t),
                        _ => None,
                    },
                ),
                "bs" => set_flag(&mut r.starved, value),
                "su" => set_flag(&mut r.startup, value),
                "sid" => set(&mut r.session, text(value, MAX_SID)),
                "cid" => set(&mut r.content, text(value, MAX_CID)),
                _ => true,
            };
            if !ok {
                r.dropped += 1;
            }
        }
        r
    }

    /// The report as CMCD data (CTA-5004 §3.2: keys in alphabetical order, a true boolean as
    /// its bare key, strings quoted): what a player's request carries. The testbed's session
    /// emulator sends it; [`Report::parse`] reads it back unchanged (`dropped` is not sent).
    pub fn encode(&self) -> String {
        fn quoted(s: &str) -> String {
            let mut q = String::with_capacity(s.len() + 2);
            q.push('"');
            for c in s.chars().filter(|c| (' '..='~').contains(c)) {
                if c == '"' || c == '\\' {
                    q.push('\\');
                }
                q.push(c);
            }
            q.push('"');
            q
        }
        let num = |k: &str, v: Option<u32>| v.map(|v| format!("{k}={v}"));
        let flag = |k: &str, v: bool| v.then(|| k.to_string());
        let object = self.object.map(|o| {
            let t = match o {
                Object::Manifest => "m",
                Object::Audio => "a",
                Object::Video => "v",
                Object::Muxed => "av",
                Object::Init => "i",
                Object::Caption => "c",
                Object::TimedText => "tt",
                Object::Key => "k",
                Object::Other => "o",
            };
            format!("ot={t}")
        });
        // Alphabetical: bl, br, bs, cid, d, dl, mtp, ot, rtp, sid, su, tb.
        [
            num("bl", self.buffer_ms),
            num("br", self.bitrate_kbps),
            flag("bs", self.starved),
            self.content
                .as_deref()
                .map(|c| format!("cid={}", quoted(c))),
            num("d", self.duration_ms),
            num("dl", self.deadline_ms),
            num("mtp", self.throughput_kbps),
            object,
            num("rtp", self.requested_kbps),
            self.session
                .as_deref()
                .map(|c| format!("sid={}", quoted(c))),
            flag("su", self.startup),
            num("tb", self.top_kbps),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(",")
    }

    /// The report in CMCD data `s` (a Dictionary).
    pub fn parse(s: &str) -> Result<Report, Refused> {
        decode(s).map(|p| Report::from_pairs(&p))
    }

    /// The report in a request's query string (without the `?`): `Ok(None)` when it has no
    /// `CMCD` parameter.
    pub fn from_query(query: &str) -> Result<Option<Report>, Refused> {
        query_data(query)?.map(|v| Report::parse(&v)).transpose()
    }

    /// The report in a request's CMCD headers: `values` yields the (lower-case name, value) of
    /// every header; `Ok(None)` when none is a CMCD header. Each header is a Dictionary of its
    /// own; together they make one report.
    pub fn from_headers<'a>(
        values: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<Option<Report>, Refused> {
        let mut pairs = Vec::new();
        let (mut any, mut bytes) = (false, 0usize);
        for (name, value) in values {
            if !HEADERS.contains(&name) {
                continue;
            }
            any = true;
            bytes += value.len();
            if bytes > MAX_BYTES {
                return Err(Refused::Oversized { bytes });
            }
            let s = std::str::from_utf8(value).map_err(|_| Refused::Malformed)?;
            pairs.extend(decode(s)?);
        }
        Ok(any.then(|| Report::from_pairs(&pairs)))
    }
}

/// How a CMCD v2 inner list becomes one number.
#[derive(Clone, Copy)]
enum Fold {
    One,
    Min,
    Sum,
}
use Fold::*;

fn number(v: &Value, fold: Fold, max: i64) -> Option<u32> {
    let n = match (v, fold) {
        (Value::Integer(i), _) => *i,
        (Value::List(items), Min | Sum) if !items.is_empty() => {
            let mut acc: Option<i64> = None;
            for item in items {
                let Value::Integer(i) = item else { return None };
                if !(0..=max).contains(i) {
                    return None;
                }
                acc = Some(match (acc, fold) {
                    (None, _) => *i,
                    (Some(a), Min) => a.min(*i),
                    (Some(a), _) => a + i,
                });
            }
            acc?
        }
        _ => return None,
    };
    ((0..=max).contains(&n)).then(|| u32::try_from(n).unwrap_or(u32::MAX))
}

fn rate(v: &Value, fold: Fold) -> Option<u32> {
    number(v, fold, MAX_KBPS)
}

fn time(v: &Value, fold: Fold) -> Option<u32> {
    number(v, fold, MAX_MS)
}

fn text(v: &Value, max: usize) -> Option<String> {
    match v {
        Value::String(s) if s.chars().count() <= max => Some(s.clone()),
        _ => None,
    }
}

/// Sets `slot` to `v` and says whether `v` was good.
fn set<T>(slot: &mut Option<T>, v: Option<T>) -> bool {
    let ok = v.is_some();
    if ok {
        *slot = v;
    }
    ok
}

fn set_flag(slot: &mut bool, v: &Value) -> bool {
    match v {
        Value::Boolean(b) => {
            *slot = *b;
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoder writes CTA-5004's own example back as the specification prints it, and an
    /// awkward session id survives the round trip.
    #[test]
    fn encoding_is_the_specification_example_and_round_trips() {
        let text = "bl=21300,br=3200,bs,cid=\"faec5fc2\",d=4004,dl=18500,mtp=25400,ot=v,rtp=15000,\
                    sid=\"6e2fb550-c457-11e9-bb97-0800200c9a66\",su,tb=6000";
        assert_eq!(Report::parse(text).unwrap().encode(), text);
        let r = Report {
            session: Some("a\"b\\c".into()),
            object: Some(Object::Muxed),
            ..Report::default()
        };
        assert_eq!(r.encode(), "ot=av,sid=\"a\\\"b\\\\c\"");
        assert_eq!(Report::parse(&r.encode()).unwrap(), r);
        assert_eq!(Report::default().encode(), "");
    }

    /// CTA-5004's own example, every key typed.
    #[test]
    fn the_specification_example() {
        let r = Report::parse(
            "bl=21300,br=3200,bs,cid=\"faec5fc2\",d=4004,dl=18500,mtp=25400,ot=v,rtp=15000,\
             sid=\"6e2fb550-c457-11e9-bb97-0800200c9a66\",su,tb=6000",
        )
        .unwrap();
        assert_eq!(
            r,
            Report {
                bitrate_kbps: Some(3200),
                buffer_ms: Some(21300),
                throughput_kbps: Some(25400),
                duration_ms: Some(4004),
                deadline_ms: Some(18500),
                requested_kbps: Some(15000),
                top_kbps: Some(6000),
                object: Some(Object::Video),
                starved: true,
                startup: true,
                session: Some("6e2fb550-c457-11e9-bb97-0800200c9a66".into()),
                content: Some("faec5fc2".into()),
                dropped: 0,
            }
        );
    }

    /// Values of the wrong type or out of range are dropped one by one and counted; the rest
    /// of the report stands.
    #[test]
    fn bad_values_are_dropped_and_counted() {
        let long = "x".repeat(MAX_SID + 1);
        let r = Report::parse(&format!(
            "br=-5,bl=1.5,mtp=\"fast\",d=99999999999,ot=zz,bs=7,sid=\"{long}\",rtp=800,tb=(1 -2)"
        ))
        .unwrap();
        assert_eq!(r.dropped, 8);
        assert_eq!(r.requested_kbps, Some(800));
        assert_eq!((r.bitrate_kbps, r.buffer_ms, r.session), (None, None, None));
        assert!(!r.starved);
        // A later good value for a key still counts; the dropped one is counted once.
        let r = Report::parse("br=-1,br=700").unwrap();
        assert_eq!(
            (r.bitrate_kbps, r.dropped),
            (Some(700), 0),
            "RFC 8941: the last wins"
        );
    }

    /// CMCD v2's per-media lists: the smallest buffer, the summed bitrates.
    #[test]
    fn lists_fold() {
        let r = Report::parse("v=2,br=(3000 128),bl=(4000 9000),tb=(6000 256)").unwrap();
        assert_eq!(r.bitrate_kbps, Some(3128));
        assert_eq!(r.buffer_ms, Some(4000));
        assert_eq!(r.top_kbps, Some(6256));
        assert_eq!(Report::parse("mtp=(1 2)").unwrap().dropped, 1);
        assert_eq!(Report::parse("br=()").unwrap().dropped, 1);
    }

    #[test]
    fn refusals() {
        for bad in [
            "BR=1",
            "br=1,,bl=2",
            "br=1e3",
            "br=99999999999999999",
            "=",
            "sid=\"a",
        ] {
            assert_eq!(Report::parse(bad), Err(Refused::Malformed), "{bad}");
        }
        let big = format!("nor=\"{}\"", "a".repeat(MAX_BYTES));
        assert!(matches!(
            Report::parse(&big),
            Err(Refused::Oversized { bytes }) if bytes == MAX_BYTES + 6
        ));
        assert_eq!(Report::parse(""), Ok(Report::default()));
    }

    #[test]
    fn query_and_headers() {
        let q = "x=1&CMCD=br%3D3200%2Cbs%2Csid%3D%22a%20b%22&y=2";
        let r = Report::from_query(q).unwrap().unwrap();
        assert_eq!(r.bitrate_kbps, Some(3200));
        assert_eq!(r.session.as_deref(), Some("a b"));
        assert!(r.starved);
        assert_eq!(Report::from_query("x=1"), Ok(None));
        assert_eq!(
            Report::from_query("CMCD=br%3D1&CMCD=br%3D2"),
            Err(Refused::Malformed)
        );
        assert_eq!(Report::from_query("CMCD=BR%3D1"), Err(Refused::Malformed));

        let h: Vec<(&str, &[u8])> = vec![
            ("cmcd-object", b"br=3200,d=4004"),
            ("host", b"edge"),
            ("cmcd-request", b"bl=100,mtp=200"),
            ("cmcd-session", b"sid=\"x\""),
            ("cmcd-status", b"bs"),
        ];
        let r = Report::from_headers(h).unwrap().unwrap();
        assert_eq!(
            (r.bitrate_kbps, r.buffer_ms, r.throughput_kbps, r.starved),
            (Some(3200), Some(100), Some(200), true)
        );
        assert_eq!(Report::from_headers([("host", &b"a"[..])]), Ok(None));
        let bad: [(&str, &[u8]); 1] = [("cmcd-status", b"\xff")];
        assert_eq!(Report::from_headers(bad), Err(Refused::Malformed));
        let big = vec![b'a'; MAX_BYTES];
        let two: [(&str, &[u8]); 2] = [("cmcd-object", b"br=1"), ("cmcd-session", &big)];
        assert!(matches!(
            Report::from_headers(two),
            Err(Refused::Oversized { .. })
        ));
    }
}
