//! The synthetic catalogue an origin serves: objects `0..objects`, each with a size drawn from
//! `min_size..=max_size` by a hash of (seed, id), and bytes that are a function of (seed, id),
//! so any copy can be checked byte for byte and nothing is stored.

use bytes::Bytes;
use cdnlab::rng::{splitmix64, splitmix64_at};

/// Largest object: 64 MiB.
pub const MAX_SIZE: u32 = 64 << 20;

/// The catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Catalogue {
    pub objects: u64,
    pub min_size: u32,
    pub max_size: u32,
    pub seed: u64,
}

impl Catalogue {
    /// A catalogue, checked: at least one object, 1 <= min_size <= max_size <= 64 MiB.
    pub fn new(
        objects: u64,
        min_size: u32,
        max_size: u32,
        seed: u64,
    ) -> Result<Self, cdnlab::Error> {
        if objects == 0 {
            return Err(cdnlab::Error::param("objects", 0, "at least 1"));
        }
        if min_size == 0 || min_size > max_size || max_size > MAX_SIZE {
            return Err(cdnlab::Error::param(
                "size",
                format!("{min_size}..={max_size}"),
                format!("1 <= min <= max <= {MAX_SIZE} bytes"),
            ));
        }
        Ok(Catalogue {
            objects,
            min_size,
            max_size,
            seed,
        })
    }

    /// Size of object `id` in bytes.
    pub fn size(&self, id: u64) -> u32 {
        let span = u64::from(self.max_size - self.min_size) + 1;
        self.min_size + (splitmix64(self.seed ^ splitmix64(id)) % span) as u32
    }

    /// The bytes of object `id`: output i of a SplitMix64 stream keyed by (seed, id) fills
    /// bytes 8 i .. 8 i + 8.
    pub fn bytes(&self, id: u64) -> Bytes {
        let key = splitmix64(self.seed.rotate_left(17) ^ id);
        let size = self.size(id) as usize;
        let mut v = Vec::with_capacity(size + 8);
        for i in 0..size.div_ceil(8) as u64 {
            v.extend_from_slice(&splitmix64_at(key, i).to_le_bytes());
        }
        v.truncate(size);
        Bytes::from(v)
    }
}

/// Why a path's object id is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdError {
    /// Not 1 to 20 decimal digits within u64.
    Malformed,
    /// A well-formed id outside the catalogue.
    Unknown,
}

/// Parses an object id: 1 to 20 ASCII digits, within u64 (no sign, no spaces, no dots, so no
/// path tricks get through), and below `objects` if given.
pub fn parse_id(s: &str, objects: Option<u64>) -> Result<u64, IdError> {
    if s.is_empty() || s.len() > 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(IdError::Malformed);
    }
    let id: u64 = s.parse().map_err(|_| IdError::Malformed)?;
    match objects {
        Some(n) if id >= n => Err(IdError::Unknown),
        _ => Ok(id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_bytes_are_functions_of_seed_and_id() {
        let c = Catalogue::new(1000, 100, 200, 7).unwrap();
        for id in 0..1000 {
            let b = c.bytes(id);
            assert_eq!(b.len() as u32, c.size(id));
            assert!((100..=200).contains(&c.size(id)));
            assert_eq!(b, c.bytes(id));
        }
        assert_ne!(c.bytes(1), c.bytes(2));
        let other = Catalogue::new(1000, 100, 200, 8).unwrap();
        assert_ne!(c.bytes(1), other.bytes(1));
        // Sizes spread over the range.
        let distinct: std::collections::BTreeSet<u32> = (0..1000).map(|i| c.size(i)).collect();
        assert!(distinct.len() > 90);
    }

    #[test]
    fn ids_are_digits_within_range() {
        assert_eq!(parse_id("0", Some(10)), Ok(0));
        assert_eq!(parse_id("9", Some(10)), Ok(9));
        assert_eq!(parse_id("10", Some(10)), Err(IdError::Unknown));
        assert_eq!(parse_id("18446744073709551615", None), Ok(u64::MAX));
        for bad in [
            "",
            "-1",
            "+1",
            " 1",
            "1.0",
            "..",
            "1a",
            "18446744073709551616",
            "%2e%2e",
            "000000000000000000001",
        ] {
            assert_eq!(parse_id(bad, None), Err(IdError::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn bad_catalogues_are_refused() {
        assert!(Catalogue::new(0, 1, 1, 0).is_err());
        assert!(Catalogue::new(1, 0, 1, 0).is_err());
        assert!(Catalogue::new(1, 5, 4, 0).is_err());
        assert!(Catalogue::new(1, 1, MAX_SIZE + 1, 0).is_err());
    }
}
