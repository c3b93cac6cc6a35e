//! Named choices: a closed set of members (cache policies, size units, trace formats, GWTW's
//! probe and re-trial rules, the engines' strategies), each declared once with
//! [`registry!`](crate::registry): its variant, its name and a one-line description. Parsing,
//! error messages, `--help` and the docs tables all read that one list.

use crate::Error;

/// A closed set of named choices (a registry: cache policies, size units, GWTW's probe and
/// re-trial rules, the engines' strategies): every member, its name, and what the set is called
/// in errors. Declared with [`registry!`](crate::registry), which also gives `FromStr`; an
/// experiment's choice parameter lists [`Named::NAMES`], so its allowed values and the parser
/// cannot drift apart.
pub trait Named: Copy + 'static {
    /// What a member is called in messages ("cache policy").
    const WHAT: &'static str;
    /// Every member, in registry order (the first is the default where there is one).
    const ALL: &'static [Self];
    /// Their names, in the same order.
    const NAMES: &'static [&'static str];
    /// One line each, in the same order ("" where the registry gives none).
    const ABOUT: &'static [&'static str];
    /// The member's name.
    fn name(self) -> &'static str;

    /// The member's one-line description.
    fn about(self) -> &'static str {
        Self::ABOUT[Self::ALL
            .iter()
            .position(|m| m.name() == self.name())
            .unwrap_or(0)]
    }

    /// The member called `s`, or an error naming the allowed names.
    fn parse_name(s: &str) -> Result<Self, Error> {
        Self::NAMES
            .iter()
            .position(|&n| n == s)
            .map(|i| Self::ALL[i])
            .ok_or_else(|| Error::Unknown {
                what: Self::WHAT,
                name: s.into(),
                allowed: Self::NAMES.join(", "),
            })
    }
}

/// Declares an enum's [`Named`] registry and its `FromStr`, from one list of
/// `Variant => "name"` (or `Variant => "name": "what it is"`) in registry order; given the
/// enum itself (`pub enum Name: "what" { ... }`), declares the enum too, so that each member's
/// variant, name and line are written once.
#[macro_export]
#[doc(hidden)]
macro_rules! registry {
    // The enum and its registry in one: `pub enum Name: "what it is called" { Variant =>
    // "name": "one line", ... }`, the variants in registry order, each with its doc comment.
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident: $what:literal {
            $($(#[$vmeta:meta])* $v:ident => $n:literal $(: $about:literal)?),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $ty {
            $($(#[$vmeta])* $v),+
        }
        $crate::registry!($ty, $what, [$($ty::$v => $n $(: $about)?),+]);
    };
    ($ty:ty, $what:literal, [$($v:path => $n:literal $(: $about:literal)?),+ $(,)?]) => {
        impl $crate::named::Named for $ty {
            const WHAT: &'static str = $what;
            const ALL: &'static [Self] = &[$($v),+];
            const NAMES: &'static [&'static str] = &[$($n),+];
            const ABOUT: &'static [&'static str] = &[$($crate::registry!(@about $($about)?)),+];
            fn name(self) -> &'static str {
                match self {
                    $($v => $n),+
                }
            }
        }
        impl ::std::str::FromStr for $ty {
            type Err = $crate::Error;
            fn from_str(s: &str) -> ::std::result::Result<Self, $crate::Error> {
                <Self as $crate::named::Named>::parse_name(s)
            }
        }
    };
    (@about $about:literal) => { $about };
    (@about) => { "" };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: Named + PartialEq + std::fmt::Debug + std::str::FromStr<Err = Error>>() {
        assert_eq!(T::ALL.len(), T::NAMES.len(), "{}", T::WHAT);
        for (i, &m) in T::ALL.iter().enumerate() {
            assert_eq!(m.name(), T::NAMES[i], "{}", T::WHAT);
            assert_eq!(T::NAMES[i].parse::<T>().unwrap(), m);
            assert!(
                !T::NAMES[..i].contains(&T::NAMES[i]),
                "{} twice",
                T::NAMES[i]
            );
        }
        let e = "no-such".parse::<T>().unwrap_err().to_string();
        assert!(e.contains(T::WHAT) && e.contains("no-such"), "{e}");
        assert!(T::NAMES.iter().all(|n| e.contains(n)), "{e}");
    }

    #[test]
    fn every_registry_round_trips_and_names_its_members_in_errors() {
        check::<crate::cache::Policy>();
        check::<crate::cache::Unit>();
        check::<crate::workload::trace::Format>();
        check::<crate::select::Service>();
        check::<crate::select::gwtw::Probe>();
        check::<crate::select::gwtw::Retrial>();
        check::<crate::sim::gwtw::UserPolicy>();
        check::<crate::dht::search::Strategy>();
        check::<crate::dht::replication::Growth>();
        check::<crate::sim::multihash::PlacementPolicy>();
        check::<crate::sim::multihash::Repair>();
        check::<crate::sim::transport::stream::AllocationPolicy>();
        check::<crate::alloc::admission::Choice>();
        check::<crate::alloc::admission::Method>();
        check::<crate::alloc::problem::Balance>();
        check::<crate::cache::strata::Estimator>();
    }
}
