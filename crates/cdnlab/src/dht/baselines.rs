//! What production systems do instead, for comparison: consistent hashing with bounded loads
//! (Envoy's `hash_balance_factor`, HAProxy's `hash-balance-factor`), rendezvous (highest random
//! weight) hashing, and Maglev's lookup table. Plain single-hash consistent hashing is the ring's
//! owner of h_1(f).

use super::hash::{file_key, position_of};
use super::ring::Ring;
use crate::Error;
use crate::rng::splitmix64;

/// A production placement without replication: where a request for file `f` goes. The
/// simulator's baseline policies are these, built for a ring and rebuilt when nodes crash.
pub trait Placement: Send {
    /// The node serving `f` given this window's requests per node and their total (`None`
    /// when no live node can).
    fn node(&self, ring: &Ring, f: u64, load: &[u32], total: u64) -> Option<u32>;

    /// Whether the node must hold f's home copy (replica 1) to serve it: true for plain
    /// consistent hashing, which the simulator models as multi-hash with K = 1, so a crash
    /// loses the copy until the origin restores it; the others model routing only.
    fn stores_home(&self) -> bool {
        false
    }

    /// Recomputes what depends on the live nodes, after crashes.
    fn rebuild(&mut self, _ring: &Ring) -> Result<(), Error> {
        Ok(())
    }
}

/// Plain consistent hashing: the ring's owner of h_1(f).
#[derive(Debug, Clone, Copy)]
pub struct SingleHash;

impl Placement for SingleHash {
    fn node(&self, ring: &Ring, f: u64, _load: &[u32], _total: u64) -> Option<u32> {
        ring.owner(position_of(file_key(f), 1))
    }
    fn stores_home(&self) -> bool {
        true
    }
}

/// [`bounded_load`] with its factor.
#[derive(Debug, Clone, Copy)]
pub struct BoundedLoad {
    pub factor: f64,
}

impl Placement for BoundedLoad {
    fn node(&self, ring: &Ring, f: u64, load: &[u32], total: u64) -> Option<u32> {
        bounded_load(ring, f, self.factor, load, total)
    }
}

/// [`rendezvous`] for files 0..files, tabulated (the argmax over nodes is too slow per request).
#[derive(Debug, Clone)]
pub struct Rendezvous {
    table: Vec<u32>,
}

impl Rendezvous {
    pub fn new(ring: &Ring, files: u32) -> Result<Self, Error> {
        let table = (0..files)
            .map(|f| rendezvous(ring, u64::from(f)))
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| Error::param("nodes", 0, "at least one live node"))?;
        Ok(Rendezvous { table })
    }
}

impl Placement for Rendezvous {
    fn node(&self, _ring: &Ring, f: u64, _load: &[u32], _total: u64) -> Option<u32> {
        self.table.get(f as usize).copied()
    }
    fn rebuild(&mut self, ring: &Ring) -> Result<(), Error> {
        *self = Rendezvous::new(ring, self.table.len() as u32)?;
        Ok(())
    }
}

/// Consistent hashing with bounded loads (Mirrokni, Thorup, Zadimoghaddam): a request goes to
/// the first node clockwise from h_1(f) whose load is below ceil(factor x (total + 1) / live),
/// where total counts the requests of the current window.
pub fn bounded_load(ring: &Ring, f: u64, factor: f64, load: &[u32], total: u64) -> Option<u32> {
    let cap = (factor * (total + 1) as f64 / f64::from(ring.live())).ceil() as u32;
    let mut pos = position_of(file_key(f), 1);
    let first = ring.owner(pos)?;
    let mut node = first;
    // Walk node positions clockwise (at most one turn).
    for _ in 0..ring.positions() {
        if load[node as usize] < cap {
            return Some(node);
        }
        pos = ring.next_position(pos);
        node = ring.owner(pos)?;
    }
    Some(first)
}

/// Rendezvous hashing: the live node with the highest weight hash(f, node).
pub fn rendezvous(ring: &Ring, f: u64) -> Option<u32> {
    let key = file_key(f);
    (0..ring.nodes())
        .filter(|&n| ring.is_alive(n))
        .max_by_key(|&n| splitmix64(key ^ splitmix64(u64::from(n) ^ 0x5245_4e44)))
}

/// Maglev's lookup table (Eisenbud et al., NSDI 2016): each live node fills its preferred slots
/// in turn, following its own permutation (offset, skip), until the table is full; a file goes
/// to `table[h(f) mod size]`.
#[derive(Debug, Clone)]
pub struct Maglev {
    table: Vec<u32>,
}

impl Maglev {
    /// A table of `size` slots (a prime, at least 100 x the nodes for evenness) over the live
    /// nodes of `ring`.
    pub fn new(ring: &Ring, size: u64) -> Result<Self, Error> {
        let nodes: Vec<u32> = (0..ring.nodes()).filter(|&n| ring.is_alive(n)).collect();
        if nodes.is_empty() {
            return Err(Error::param("nodes", 0, "at least one live node"));
        }
        if size < 2 || !is_prime(size) {
            return Err(Error::param("maglev_size", size, "a prime >= 2"));
        }
        let perm: Vec<(u64, u64)> = nodes
            .iter()
            .map(|&n| {
                let h = splitmix64(u64::from(n) ^ 0x4d41_474c);
                (h % size, splitmix64(h) % (size - 1) + 1)
            })
            .collect();
        let mut next = vec![0u64; nodes.len()];
        let mut table = vec![u32::MAX; size as usize];
        let mut filled = 0u64;
        'fill: loop {
            for (i, &(offset, skip)) in perm.iter().enumerate() {
                let mut c = (offset + next[i] * skip) % size;
                while table[c as usize] != u32::MAX {
                    next[i] += 1;
                    c = (offset + next[i] * skip) % size;
                }
                table[c as usize] = nodes[i];
                next[i] += 1;
                filled += 1;
                if filled == size {
                    break 'fill;
                }
            }
        }
        Ok(Maglev { table })
    }

    /// The node of file `f`.
    #[inline]
    pub fn node(&self, f: u64) -> u32 {
        self.table[(file_key(f) % self.table.len() as u64) as usize]
    }
}

impl Placement for Maglev {
    fn node(&self, _ring: &Ring, f: u64, _load: &[u32], _total: u64) -> Option<u32> {
        Some(Maglev::node(self, f))
    }
    fn rebuild(&mut self, ring: &Ring) -> Result<(), Error> {
        *self = Maglev::new(ring, self.table.len() as u64)?;
        Ok(())
    }
}

/// Whether `n` is prime (trial division; table sizes are small).
pub fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0)
}

/// The smallest prime at or above `n`.
pub fn prime_at_least(n: u64) -> u64 {
    (n.max(2)..)
        .find(|&p| is_prime(p))
        .expect("primes are unbounded")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Maglev spreads slots within one of each other across nodes (its design guarantee), and
    /// rendezvous picks the argmax by brute force.
    #[test]
    fn maglev_is_even_and_rendezvous_is_the_argmax() {
        let ring = Ring::new(37, 1).unwrap();
        let m = Maglev::new(&ring, prime_at_least(3700)).unwrap();
        let mut counts = [0u32; 37];
        for &n in &m.table {
            counts[n as usize] += 1;
        }
        let (lo, hi) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
        assert!(hi - lo <= 1, "{lo}..{hi}");
        for f in 0..100u64 {
            let key = file_key(f);
            let best = (0..37u32)
                .max_by_key(|&n| splitmix64(key ^ splitmix64(u64::from(n) ^ 0x5245_4e44)))
                .unwrap();
            assert_eq!(rendezvous(&ring, f), Some(best));
        }
        assert!(Maglev::new(&ring, 100).is_err());
    }

    /// Bounded loads: no node ends a window above ceil(factor x total / live) + 1.
    #[test]
    fn bounded_load_respects_the_bound() {
        let ring = Ring::new(20, 1).unwrap();
        let mut load = vec![0u32; 20];
        let mut total = 0u64;
        // A skewed stream: half the requests for one file.
        for r in 0..4000u64 {
            let f = if r % 2 == 0 { 0 } else { r };
            let n = bounded_load(&ring, f, 1.25, &load, total).unwrap();
            load[n as usize] += 1;
            total += 1;
        }
        let cap = (1.25 * total as f64 / 20.0).ceil() as u32 + 1;
        assert!(load.iter().all(|&l| l <= cap), "{load:?} cap {cap}");
    }
}
