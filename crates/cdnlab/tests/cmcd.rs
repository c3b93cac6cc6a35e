//! cdnlab's CMCD decoder against an independent one: SVTA's Common Media Library
//! (`@svta/cml-cmcd`, pinned in player/package.json, run by player/cmcd-decode.mjs under node),
//! on the same strings: hand-written corners of RFC 8941/9651 and CTA-5004, several thousand
//! generated dictionaries, and as many mutations of them. Each string must be refused by both
//! or decoded by both to the same keys and values, except where CML is laxer than RFC 8941
//! (tabs inside the data, characters beyond ASCII in strings): there we refuse. Needs node and `npm ci --prefix player`.

use cdnlab::rng::splitmix64_at;
use cdnlab::steer::cmcd;
use serde_json::{Value as Json, json};

/// Ours, in the reference's shape.
fn ours(case: &Json) -> Json {
    let decoded = if let Some(d) = case.get("dict") {
        cmcd::decode(d.as_str().unwrap())
    } else {
        match cmcd::query_data(case["query"].as_str().unwrap()) {
            Ok(Some(d)) => cmcd::decode(&d),
            Ok(None) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    };
    match decoded {
        Ok(pairs) => {
            json!({ "ok": pairs.into_iter().map(|(k, v)| (k, json!(v))).collect::<serde_json::Map<_, _>>() })
        }
        Err(e) => json!({ "err": e.to_string() }),
    }
}

const HAND: &[&str] = &[
    // CTA-5004's example, and each key alone.
    "bl=21300,br=3200,bs,cid=\"faec5fc2\",d=4004,dl=18500,mtp=25400,nor=\"..%2F300kbps%2Fsegment35.m4v\",nrr=\"12323-48763\",ot=v,pr=1.08,rtp=15000,sf=d,sid=\"6e2fb550-c457-11e9-bb97-0800200c9a66\",st=v,su,tb=6000",
    "br=3200",
    "bs",
    "bs=?0,su=?1",
    "ot=av",
    "sid=\"a\\\"b\\\\c\"",
    "v=2,br=(1000 2000),bl=(100 200)",
    "",
    " br=1 ",
    "br=1, bl=2",
    "br=1,\tbl=2",
    "br=1,br=2",
    "br=-5",
    "br=1.5",
    "pr=1.125",
    "pr=1.1255",
    "br=999999999999999",
    "br=9999999999999999",
    "br=1e3",
    "BR=1",
    "br=1,,bl=2",
    "br=1,",
    ",br=1",
    "br",
    "br=",
    "=1",
    "*x=1",
    "com.example-x=1",
    "x_y.z*=1",
    "ot=v;q=1",
    "ot=v;q",
    "tb=(1 2);p=3",
    "tb=(1  2)",
    "tb=( 1 2 )",
    "tb=(1,2)",
    "tb=((1))",
    "a=:AQID:",
    "a=:AQI=:",
    "a=:!!:",
    "x=@12",
    "x=@-1",
    "x=@1.5",
    "y=%\"ab\"",
    "sid=\"é\"",
    "sid=\"a",
    "sid='a'",
    "ot=v/w",
    "ot=1v",
    "ot=*",
    "d=?2",
    "br=+1",
    "br=01",
    "br=-0",
    "pr=.5",
    "pr=5.",
    "br =1",
    "br= 1",
];

/// A generated dictionary: CMCD's keys and others, values of every kind.
fn generated(seed: u64) -> String {
    let r = |i: u64| splitmix64_at(seed, i);
    const KEYS: &[&str] = &[
        "br", "bl", "bs", "cid", "d", "dl", "mtp", "nor", "nrr", "ot", "pr", "rtp", "sf", "sid",
        "st", "su", "tb", "v", "com.x-y", "a*b", "z",
    ];
    let n = r(0) % 8;
    let mut parts = Vec::new();
    for m in 0..n {
        let k = KEYS[(r(1 + 3 * m) % KEYS.len() as u64) as usize];
        let x = r(2 + 3 * m);
        let v = match r(3 + 3 * m) % 9 {
            0 => String::new(),
            1 => format!("={}", x % 20_000_000),
            2 => format!("=-{}", x % 1000),
            3 => format!("={}.{}", x % 100, x % 1000),
            4 => format!("=\"s{:x}\"", x % 0xffff),
            5 => ["=v", "=av", "=m", "=d", "=l"][(x % 5) as usize].to_string(),
            6 => format!("=?{}", x % 2),
            7 => format!("=({} {})", x % 5000, x % 300),
            _ => format!("={};p={}", x % 100, x % 7),
        };
        parts.push(format!("{k}{v}"));
    }
    let sep = [",", ", ", ",  "][(r(99) % 3) as usize];
    parts.join(sep)
}

/// A generated string with a few random edits, mostly making it malformed.
fn mutated(s: &str, seed: u64) -> String {
    const ALPHABET: &[u8] = b"=,;\"()?* -.:@%\\aZ09\tx_";
    let mut b = s.as_bytes().to_vec();
    for e in 0..1 + splitmix64_at(seed, 0) % 3 {
        let x = splitmix64_at(seed, 1 + e);
        let at = if b.is_empty() {
            0
        } else {
            (x % b.len() as u64) as usize
        };
        let c = ALPHABET[((x >> 32) % ALPHABET.len() as u64) as usize];
        match (x >> 16) % 3 {
            0 => b.insert(at, c),
            1 if !b.is_empty() => {
                b.remove(at);
            }
            _ if !b.is_empty() => b[at] = c,
            _ => b.push(c),
        }
    }
    String::from_utf8(b).unwrap()
}

#[test]
fn cmcd_decodes_as_the_common_media_library_does() {
    let mut cases: Vec<Json> = HAND.iter().map(|s| json!({ "dict": s })).collect();
    let gen_: Vec<String> = (0..3000).map(|i| generated(0xC3CD_0000 + i)).collect();
    cases.extend(gen_.iter().map(|s| json!({ "dict": s })));
    cases.extend(
        gen_.iter()
            .enumerate()
            .map(|(i, s)| json!({ "dict": mutated(s, 0x5EED_0000 + i as u64) })),
    );
    // Queries: the data percent-encoded among other parameters, raw (unencoded), with '+'
    // for spaces, with broken escapes, and none.
    for (i, s) in gen_.iter().take(300).enumerate() {
        let q = match i % 4 {
            0 => format!("a=1&CMCD={}", cdnlab_testkit::encode_uri_component(s)),
            1 => format!("CMCD={}&b=2", s.replace(' ', "+")),
            2 => format!("CMCD={}%ZZ", cdnlab_testkit::encode_uri_component(s)),
            _ => format!("x={}", cdnlab_testkit::encode_uri_component(s)),
        };
        cases.push(json!({ "query": q }));
    }
    let Some(theirs) = cdnlab_testkit::cml_decode(&cases) else {
        return;
    };
    let (mut refused, mut both, mut lax) = (0, 0, 0);
    let mut differ = Vec::new();
    for (case, their) in cases.iter().zip(&theirs) {
        let our = ours(case);
        let agree = match (our.get("ok"), their.get("ok")) {
            (Some(a), Some(b)) => cdnlab_testkit::same_decoding(a, b),
            (None, None) => true,
            _ => false,
        };
        // Where CML is laxer than RFC 8941 (crate docs of cdnlab::steer::cmcd): it decodes,
        // we refuse, and the data has a tab or a character beyond printable ASCII.
        let data = case.get("dict").and_then(Json::as_str).unwrap_or("");
        let laxer = our.get("ok").is_none()
            && their.get("ok").is_some()
            && data
                .trim_matches([' ', '\t'])
                .chars()
                .any(|c| c == '\t' || !c.is_ascii());
        if laxer {
            lax += 1;
        } else if !agree {
            differ.push(format!("{case}: ours {our}, CML {their}"));
        } else if our.get("ok").is_some() {
            both += 1;
        } else {
            refused += 1;
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} cases differ:\n{}",
        differ.len(),
        cases.len(),
        differ[..differ.len().min(20)].join("\n")
    );
    // The figures docs/steering.md quotes (`-- --nocapture` shows them).
    eprintln!(
        "CML agreement: {} strings: {both} decoded alike, {refused} refused by both, {lax} \
         where CML is laxer",
        cases.len()
    );
    // The corpus exercises both sides: many decoded, many refused.
    assert!(
        both > 2500 && refused > 1500,
        "decoded {both}, refused {refused}"
    );
    // 3 on this corpus (docs/steering.md); a few more would still be the same laxness.
    assert!(lax <= 5, "{lax} cases where CML is laxer");
}
