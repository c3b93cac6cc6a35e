//! The ring file of a DHT of edges: the shared secret of the internal endpoints, the hash
//! family's size K, virtual nodes per edge, and every edge's id and address (ids 0..n, each
//! once). JSON:
//!
//! ```json
//! {"secret": "at least 16 characters", "k": 64, "vnodes": 16,
//!  "edges": [{"id": 0, "addr": "127.0.0.1:9101"}, {"id": 1, "addr": "127.0.0.1:9102"}]}
//! ```

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::Path;

/// A validated ring file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingFile {
    pub secret: String,
    pub k: u32,
    pub vnodes: u32,
    /// Edge addresses by id.
    pub edges: Vec<SocketAddr>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    secret: String,
    k: u32,
    vnodes: u32,
    edges: Vec<RawEdge>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEdge {
    id: u32,
    addr: SocketAddr,
}

impl RingFile {
    /// Reads and checks a ring file; errors name the file and what is wrong.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and checks ring-file text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let raw: Raw = serde_json::from_str(text).map_err(|e| {
            format!(
                "{e} (expected {{\"secret\": string, \"k\": int, \"vnodes\": int, \"edges\": [{{\"id\": int, \"addr\": \"ip:port\"}}]}})"
            )
        })?;
        if raw.secret.chars().count() < 16 {
            return Err("secret: at least 16 characters are needed".into());
        }
        if !(1..=4096).contains(&raw.k) {
            return Err(format!(
                "k: {} is not allowed (1 to 4096 hash functions)",
                raw.k
            ));
        }
        if !(1..=1024).contains(&raw.vnodes) {
            return Err(format!("vnodes: {} is not allowed (1 to 1024)", raw.vnodes));
        }
        let n = raw.edges.len();
        if n == 0 || n > 4096 {
            return Err(format!("edges: {n} listed (1 to 4096 are allowed)"));
        }
        let mut edges: Vec<Option<SocketAddr>> = vec![None; n];
        for e in &raw.edges {
            let slot = edges.get_mut(e.id as usize).ok_or_else(|| {
                format!("edge id {}: ids are 0 to {} (one per edge)", e.id, n - 1)
            })?;
            if slot.replace(e.addr).is_some() {
                return Err(format!("edge id {} is listed twice", e.id));
            }
        }
        let edges: Vec<SocketAddr> = edges.into_iter().flatten().collect();
        let mut sorted = edges.clone();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("address {} is listed twice", w[0]));
        }
        Ok(RingFile {
            secret: raw.secret,
            k: raw.k,
            vnodes: raw.vnodes,
            edges,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::same_secret;

    const GOOD: &str = r#"{"secret": "0123456789abcdef", "k": 8, "vnodes": 4,
        "edges": [{"id": 1, "addr": "127.0.0.1:2"}, {"id": 0, "addr": "127.0.0.1:1"}]}"#;

    #[test]
    fn a_good_ring_and_its_secret() {
        let r = RingFile::parse(GOOD).unwrap();
        assert_eq!(
            r.edges,
            [
                "127.0.0.1:1".parse().unwrap(),
                "127.0.0.1:2".parse().unwrap()
            ]
        );
        assert!(same_secret(r.secret.as_bytes(), b"0123456789abcdef"));
        assert!(
            !same_secret(r.secret.as_bytes(), b"0123456789abcdeX")
                && !same_secret(r.secret.as_bytes(), b"")
        );
    }

    #[test]
    fn bad_rings_say_what_is_wrong() {
        for (text, needle) in [
            ("", "expected"),
            ("{}", "missing field"),
            (&GOOD.replace("0123456789abcdef", "short"), "secret"),
            (&GOOD.replace("\"k\": 8", "\"k\": 0"), "k: 0"),
            (&GOOD.replace("\"vnodes\": 4", "\"vnodes\": 0"), "vnodes"),
            (&GOOD.replace("\"id\": 1", "\"id\": 0"), "listed twice"),
            (&GOOD.replace("\"id\": 1", "\"id\": 5"), "ids are 0 to 1"),
            (
                &GOOD.replace("127.0.0.1:2", "127.0.0.1:1"),
                "address 127.0.0.1:1",
            ),
            (&GOOD.replace("127.0.0.1:2", "nowhere"), "invalid"),
            (
                &GOOD.replace("\"k\": 8", "\"k\": 8, \"extra\": 1"),
                "unknown field",
            ),
            (
                r#"{"secret": "0123456789abcdef", "k": 8, "vnodes": 4, "edges": []}"#,
                "edges: 0",
            ),
        ] {
            let e = RingFile::parse(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
