//! Content catalogues: `n` objects with ids `0..n` and a size each.

use crate::Error;
use rand::RngExt;

/// How object sizes are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeLaw {
    /// Every object has size 1 (capacities count objects).
    Unit,
    /// Every object has the same size in bytes.
    Constant(u32),
    /// Sizes uniform on `min..=max` bytes.
    Uniform { min: u32, max: u32 },
}

/// A catalogue of objects `0..len`, each with a size.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalogue {
    sizes: Vec<u32>,
}

impl Catalogue {
    /// Builds `n` objects whose sizes follow `law`; the RNG is used only for random laws.
    pub fn new(n: usize, law: SizeLaw, rng: &mut crate::rng::Rng) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::param("objects", n, "at least 1"));
        }
        let sizes = match law {
            SizeLaw::Unit => vec![1; n],
            SizeLaw::Constant(0) => return Err(Error::param("size", 0, "at least 1 byte")),
            SizeLaw::Constant(s) => vec![s; n],
            SizeLaw::Uniform { min, max } => {
                if min == 0 || min > max {
                    return Err(Error::param(
                        "size",
                        format!("{min}..={max}"),
                        "1 <= min <= max",
                    ));
                }
                (0..n).map(|_| rng.random_range(min..=max)).collect()
            }
        };
        Ok(Catalogue { sizes })
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Never true: a catalogue has at least one object.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// Size of object `id`.
    pub fn size(&self, id: usize) -> u32 {
        self.sizes[id]
    }

    /// Total bytes of all objects.
    pub fn total_bytes(&self) -> u64 {
        self.sizes.iter().map(|&s| u64::from(s)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_law() {
        let mut rng = crate::rng::stream(1, 0, 0);
        let c = Catalogue::new(1000, SizeLaw::Uniform { min: 10, max: 20 }, &mut rng).unwrap();
        assert!((0..1000).all(|i| (10..=20).contains(&c.size(i))));
        let u = Catalogue::new(5, SizeLaw::Unit, &mut rng).unwrap();
        assert_eq!(u.total_bytes(), 5);
        assert!(Catalogue::new(0, SizeLaw::Unit, &mut rng).is_err());
        assert!(Catalogue::new(3, SizeLaw::Uniform { min: 5, max: 4 }, &mut rng).is_err());
    }
}
