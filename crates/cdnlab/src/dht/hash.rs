//! The hash family h_1, h_2, ... and node positions on a ring of 2^64 positions.
//!
//! Our own arithmetic (SplitMix64's mixer), not `std::hash`, whose output may change between Rust
//! releases: a replica's position must be the same in every run, on every machine, forever, or
//! stored results and live deployments disagree. Reference values are pinned by a test.
//!
//! Rules: MH-R1 of docs/spec/multihash.md.

use crate::rng::splitmix64;

/// Domain separators, so that file positions and node positions are unrelated.
const FILE_DOMAIN: u64 = 0x6669_6c65_5f68_6173; // "file_has"
const NODE_DOMAIN: u64 = 0x6e6f_6465_5f70_6f73; // "node_pos"

/// The per-file part of h_i(f); computing it once per request makes each probe one mix.
#[inline]
pub fn file_key(file: u64) -> u64 {
    splitmix64(file ^ FILE_DOMAIN)
}

/// h_i(key) for a [`file_key`]: the ring position of replica `index` (1-based).
#[inline]
pub fn position_of(key: u64, index: u32) -> u64 {
    splitmix64(key ^ u64::from(index).wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// h_i(f): the ring position of replica `index` (1-based) of `file`.
#[inline]
pub fn position(file: u64, index: u32) -> u64 {
    position_of(file_key(file), index)
}

/// The ring position of virtual node `vnode` of node `node` on the ring of `salt`. Salt 0 is
/// the ring of live deployments and ring files, and its positions are pinned. Another salt is
/// another, independent ring: the simulator draws one per replication, so that each run is a
/// new network and not the same one sampled again.
pub fn node_position(node: u32, vnode: u32, salt: u64) -> u64 {
    // An odd multiplier keeps salts apart, and salt 0 leaves the domain as it always was.
    let domain = NODE_DOMAIN ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    splitmix64(splitmix64(u64::from(node) ^ domain) ^ u64::from(vnode))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pinned outputs, computed independently (a Python transcription of SplitMix64): if these
    /// change, every stored placement changes. Do not update them without a migration note.
    #[test]
    fn positions_are_stable() {
        assert_eq!(position(0, 1), 0xc48e_2f94_6d5a_3c6f);
        assert_eq!(position(12345, 7), 0xa1f9_9190_944d_8e84);
        assert_eq!(node_position(3, 0, 0), 0x353c_6536_db26_6b60);
    }

    /// Another salt moves every node, unrelated to where it was.
    #[test]
    fn salts_make_other_rings() {
        let moved = (0..1000)
            .filter(|&n| node_position(n, 0, 7) != node_position(n, 0, 0))
            .count();
        assert_eq!(moved, 1000);
        let agree = (0..10_000u32)
            .filter(|&n| (node_position(n, 0, 7) >> 63) == (node_position(n, 0, 0) >> 63))
            .count() as f64;
        // Top bits agree half the time: within 5 sd (50).
        assert!((agree - 5000.0).abs() < 250.0, "{agree}");
    }

    /// Positions of many (file, index) pairs fall evenly into 64 arcs (chi-square, 63 degrees
    /// of freedom: above 110 has probability below 2e-4), and h_i, h_j of one file are not
    /// correlated (the top bit agrees half the time, within 5 sd).
    #[test]
    fn positions_are_uniform_and_independent() {
        let mut counts = [0u64; 64];
        let (files, k) = (20_000u64, 8u32);
        let mut agree = 0u64;
        for f in 0..files {
            for i in 1..=k {
                counts[(position(f, i) >> 58) as usize] += 1;
            }
            agree += u64::from((position(f, 1) >> 63) == (position(f, 2) >> 63));
        }
        let n = (files * u64::from(k)) as f64;
        let e = n / 64.0;
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        assert!(chi2 < 110.0, "chi2 {chi2}");
        let sd = (files as f64 * 0.25).sqrt();
        assert!(
            (agree as f64 - files as f64 / 2.0).abs() < 5.0 * sd,
            "{agree}"
        );
    }
}
