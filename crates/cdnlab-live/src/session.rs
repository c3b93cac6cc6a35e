//! Streaming-session tokens: minted and signed by the steering server when `/play` opens a
//! session, checked by the edges before a session may take a slot, so that session ids can be
//! neither made up nor moved to another population.
//!
//! A token is `{serial}-{expires}-{mac}`: the session's serial number in its population (the
//! steering server's n-th session, which also places it on the golden-ratio sequence), the Unix
//! second after which no edge starts it, and HMAC-SHA256 (RFC 2104) of
//! `cdnlab-session \0 population \0 serial-expires` keyed with the topology's shared secret,
//! truncated to its leftmost 128 bits (RFC 2104 section 5: at least half the hash, and at
//! least 80 bits) in lowercase hex. At most 64 characters (a serial below 2^64 has 20 digits,
//! an expiry before the year 2286 has 10), letters, digits and `-`: a path segment as it is,
//! within the edges' 64-character session names.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::time::{SystemTime, UNIX_EPOCH};

/// Bytes of the MAC kept (128 bits).
const MAC_BYTES: usize = 16;

/// Longest token accepted (a 20-digit serial, a 10-digit expiry, the MAC, two dashes).
pub const MAX_TOKEN: usize = 20 + 1 + 10 + 1 + 2 * MAC_BYTES;

/// What a valid token says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// The session's serial number in its population.
    pub serial: u64,
    /// Unix second after which the token starts no session.
    pub expires: u64,
}

/// Why a token is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("not a session token (serial-expiry-mac)")]
    Malformed,
    #[error("session token not signed by the steering server for this population")]
    Forged,
    #[error("session token expired")]
    Expired,
}

/// Seconds since the Unix epoch now.
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn mac(secret: &str, population: &str, serial: u64, expires: u64) -> Hmac<Sha256> {
    // Any key length is accepted by HMAC (RFC 2104 section 2).
    let mut m = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    m.update(b"cdnlab-session\0");
    m.update(population.as_bytes());
    m.update(b"\0");
    m.update(format!("{serial}-{expires}").as_bytes());
    m
}

/// The token of session `serial` of `population`, valid to `expires` (Unix seconds).
pub fn mint(secret: &str, population: &str, serial: u64, expires: u64) -> String {
    let tag = mac(secret, population, serial, expires)
        .finalize()
        .into_bytes();
    let mut s = format!("{serial}-{expires}-");
    for b in &tag[..MAC_BYTES] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Reads `token` without checking it: its serial and expiry, if it has the token's shape.
pub fn parse(token: &str) -> Option<Token> {
    if token.len() > MAX_TOKEN {
        return None;
    }
    let mut parts = token.splitn(3, '-');
    let (serial, expires, tag) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(serial) || !digits(expires) || tag.len() != 2 * MAC_BYTES {
        return None;
    }
    Some(Token {
        serial: serial.parse().ok()?,
        expires: expires.parse().ok()?,
    })
}

fn unhex(tag: &str) -> Option<[u8; MAC_BYTES]> {
    let mut out = [0u8; MAC_BYTES];
    for (i, o) in out.iter_mut().enumerate() {
        // Lowercase only: the minted form, one spelling per token.
        let pair = tag.get(2 * i..2 * i + 2)?;
        if pair.bytes().any(|b| b.is_ascii_uppercase()) {
            return None;
        }
        *o = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

/// Checks that `token` was minted with `secret` for `population` and is not expired at `now`
/// (Unix seconds). The MAC is compared in constant time.
pub fn check(secret: &str, population: &str, token: &str, now: u64) -> Result<Token, TokenError> {
    let t = parse(token).ok_or(TokenError::Malformed)?;
    let tag = token.rsplit('-').next().and_then(unhex);
    let tag = tag.ok_or(TokenError::Malformed)?;
    mac(secret, population, t.serial, t.expires)
        .verify_truncated_left(&tag)
        .map_err(|_| TokenError::Forged)?;
    if now > t.expires {
        return Err(TokenError::Expired);
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0123456789abcdef";

    #[test]
    fn minted_tokens_check_and_nothing_else_does() {
        let t = mint(KEY, "pa", 7, 2_000_000_000);
        assert!(t.starts_with("7-2000000000-") && t.len() == 13 + 32, "{t}");
        assert_eq!(
            check(KEY, "pa", &t, 1_999_999_999),
            Ok(Token {
                serial: 7,
                expires: 2_000_000_000
            })
        );
        // The expiry second itself still starts a session; the next does not.
        assert!(check(KEY, "pa", &t, 2_000_000_000).is_ok());
        assert_eq!(
            check(KEY, "pa", &t, 2_000_000_001),
            Err(TokenError::Expired)
        );
        // Another population, another secret, another serial or expiry: forged.
        assert_eq!(check(KEY, "pb", &t, 0), Err(TokenError::Forged));
        assert_eq!(
            check("fedcba9876543210", "pa", &t, 0),
            Err(TokenError::Forged)
        );
        let tag = t.rsplit('-').next().unwrap();
        assert_eq!(
            check(KEY, "pa", &format!("8-2000000000-{tag}"), 0),
            Err(TokenError::Forged)
        );
        assert_eq!(
            check(KEY, "pa", &format!("7-2100000000-{tag}"), 0),
            Err(TokenError::Forged)
        );
        // One hex digit changed.
        let mut flipped = t.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
        let flipped = String::from_utf8(flipped).unwrap();
        assert_eq!(check(KEY, "pa", &flipped, 0), Err(TokenError::Forged));
        // The old sequential ids and other shapes.
        for bad in [
            "pa-0",
            "",
            "7-2000000000",
            "7--x",
            &t.to_uppercase(),
            &format!("{t}0"),
            &format!("x{t}"),
            "99999999999999999999999-1-00000000000000000000000000000000",
        ] {
            assert_eq!(
                check(KEY, "pa", bad, 0),
                Err(TokenError::Malformed),
                "{bad}"
            );
        }
    }

    /// The MAC is HMAC-SHA256 as RFC 4231 defines it: test case 2 of RFC 4231 section 4.3
    /// through the same crate calls, so the tag is the standard's, not a look-alike.
    #[test]
    fn the_mac_is_rfc_4231_hmac_sha256() {
        let mut m = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        let tag: String = m
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            tag,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
