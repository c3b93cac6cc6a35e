//! Experiment parameters: declarations with ranges, and resolved values.

use crate::Error;
use std::collections::BTreeMap;

/// A parameter value as written in a scenario.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Text(String),
    Bool(bool),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(x) => write!(f, "{x}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Text(x) => write!(f, "{x}"),
            Value::Bool(x) => write!(f, "{x}"),
        }
    }
}

/// What values a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A whole number in `min..=max`.
    Int {
        min: i64,
        max: i64,
    },
    /// A number from `min` to `max` (an integer is accepted too); an open end excludes its
    /// bound ("above 0" for a rate, "below 1" for a hysteresis factor).
    Float {
        min: f64,
        max: f64,
        min_open: bool,
        max_open: bool,
    },
    /// One of the listed words.
    Choice(&'static [&'static str]),
    Bool,
}

impl Kind {
    /// Whether number `x` is allowed (false for other kinds).
    fn holds(&self, x: f64) -> bool {
        match *self {
            Kind::Float {
                min,
                max,
                min_open,
                max_open,
            } => {
                x.is_finite()
                    && if min_open { x > min } else { x >= min }
                    && if max_open { x < max } else { x <= max }
            }
            _ => false,
        }
    }

    /// What is allowed, in words.
    pub fn allowed(&self) -> String {
        match self {
            Kind::Int { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Float {
                min,
                max,
                min_open,
                max_open,
            } => match (min_open, max_open) {
                (false, false) => format!("a number from {min} to {max}"),
                (true, false) => format!("a number above {min}, at most {max}"),
                (false, true) => format!("a number from {min}, below {max}"),
                (true, true) => format!("a number above {min} and below {max}"),
            },
            Kind::Choice(c) => format!("one of {}", c.join(", ")),
            Kind::Bool => "true or false".into(),
        }
    }
}

/// A declared metric: a column of `results.csv`, with its unit and meaning (shown by
/// `cdnlab experiments` and used for axis labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricSpec {
    pub name: &'static str,
    /// "fraction", "slots", "s", "0/1" (a yes/no as a number), ...
    pub unit: &'static str,
    pub help: &'static str,
}

impl MetricSpec {
    pub const fn new(name: &'static str, unit: &'static str, help: &'static str) -> Self {
        MetricSpec { name, unit, help }
    }

    /// The shape of its interval: yes/no for "0/1", a share in [0, 1] for "fraction" and
    /// "share", any number otherwise.
    pub fn scale(&self) -> crate::stats::Scale {
        use crate::stats::Scale;
        match self.unit {
            "0/1" => Scale::YesNo,
            "fraction" | "share" => Scale::Share,
            _ => Scale::Free,
        }
    }

    /// "name (unit)", the axis label when nothing better is given.
    pub fn label(&self) -> String {
        if self.unit.is_empty() {
            self.name.to_string()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }
}

/// A declared parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub default: DefaultValue,
    pub help: &'static str,
    /// Its unit, or what the number is when it has none ("slots", "Zipf exponent"); "" if not
    /// said. Plots label their x axis `name (unit)`.
    pub unit: &'static str,
}

/// A default, in a form that can live in a `static`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    Int(i64),
    Float(f64),
    Text(&'static str),
    Bool(bool),
}

impl std::fmt::Display for DefaultValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value().fmt(f)
    }
}

impl DefaultValue {
    fn value(self) -> Value {
        match self {
            DefaultValue::Int(x) => Value::Int(x),
            DefaultValue::Float(x) => Value::Float(x),
            DefaultValue::Text(x) => Value::Text(x.into()),
            DefaultValue::Bool(x) => Value::Bool(x),
        }
    }
}

impl ParamSpec {
    /// A whole-number parameter in `min..=max`.
    pub const fn int(
        name: &'static str,
        min: i64,
        max: i64,
        default: i64,
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind: Kind::Int { min, max },
            default: DefaultValue::Int(default),
            help,
            unit: "",
        }
    }

    /// A number parameter in `min..=max`.
    pub const fn float(
        name: &'static str,
        min: f64,
        max: f64,
        default: f64,
        help: &'static str,
    ) -> Self {
        Self::range(name, (min, false), (max, false), default, help)
    }

    /// A number parameter above 0, at most `max` (a rate, a duration, a load).
    pub const fn positive(name: &'static str, max: f64, default: f64, help: &'static str) -> Self {
        Self::range(name, (0.0, true), (max, false), default, help)
    }

    /// A number parameter between two bounds, each (value, open).
    pub const fn range(
        name: &'static str,
        (min, min_open): (f64, bool),
        (max, max_open): (f64, bool),
        default: f64,
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind: Kind::Float {
                min,
                max,
                min_open,
                max_open,
            },
            default: DefaultValue::Float(default),
            help,
            unit: "",
        }
    }

    /// One of `options`; the first is the default.
    pub const fn choice(
        name: &'static str,
        options: &'static [&'static str],
        help: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind: Kind::Choice(options),
            default: DefaultValue::Text(options[0]),
            help,
            unit: "",
        }
    }

    /// A true/false parameter.
    pub const fn flag(name: &'static str, default: bool, help: &'static str) -> Self {
        ParamSpec {
            name,
            kind: Kind::Bool,
            default: DefaultValue::Bool(default),
            help,
            unit: "",
        }
    }

    /// The same parameter with its unit.
    pub const fn unit(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }

    /// `name (unit)`, or the name alone (without a unit, or one that repeats the name).
    pub fn label(&self) -> String {
        if self.unit.is_empty() || self.unit == self.name {
            self.name.to_string()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }

    /// Checks `v` against the kind, normalising an integer given for a float.
    pub fn validate(&self, v: &Value) -> Result<Value, Error> {
        let bad = || Error::param(self.name, v, self.kind.allowed());
        match (self.kind, v) {
            (Kind::Int { min, max }, Value::Int(x)) if (min..=max).contains(x) => Ok(v.clone()),
            (Kind::Float { .. }, Value::Float(x)) if self.kind.holds(*x) => Ok(v.clone()),
            (Kind::Float { .. }, Value::Int(x)) if self.kind.holds(*x as f64) => {
                Ok(Value::Float(*x as f64))
            }
            (Kind::Choice(c), Value::Text(x)) if c.contains(&x.as_str()) => Ok(v.clone()),
            (Kind::Bool, Value::Bool(_)) => Ok(v.clone()),
            _ => Err(bad()),
        }
    }
}

/// Resolved parameters of one cell: every declared name has a valid value.
#[derive(Debug, Clone, PartialEq)]
pub struct Params(BTreeMap<String, Value>);

impl Params {
    /// Validates `given` against `specs` and fills in defaults. Unknown names are refused.
    pub fn resolve(specs: &[ParamSpec], given: &BTreeMap<String, Value>) -> Result<Params, Error> {
        if let Some(k) = given.keys().find(|k| !specs.iter().any(|s| s.name == *k)) {
            return Err(Error::Unknown {
                what: "parameter",
                name: k.clone(),
                allowed: specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
            });
        }
        let mut out = BTreeMap::new();
        for s in specs {
            let v = match given.get(s.name) {
                Some(v) => s.validate(v)?,
                None => s.default.value(),
            };
            out.insert(s.name.to_string(), v);
        }
        Ok(Params(out))
    }

    /// The values, by name.
    pub fn values(&self) -> &BTreeMap<String, Value> {
        &self.0
    }

    fn get(&self, name: &str) -> &Value {
        // Experiments only ask for names they declared; resolve() filled every one.
        self.0
            .get(name)
            .unwrap_or_else(|| panic!("parameter `{name}` was not declared"))
    }

    /// The error that parameter `name`, at its value here, is not allowed: `allowed` says what
    /// is (for the checks that involve several parameters).
    pub fn refuse(&self, name: &str, allowed: impl Into<String>) -> Error {
        Error::param(name, self.get(name), allowed)
    }

    /// An integer parameter.
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Value::Int(x) => *x,
            v => panic!("parameter `{name}` is {v:?}, not an integer"),
        }
    }

    /// A float parameter.
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Float(x) => *x,
            Value::Int(x) => *x as f64,
            v => panic!("parameter `{name}` is {v:?}, not a number"),
        }
    }

    /// A text parameter.
    pub fn text(&self, name: &str) -> &str {
        match self.get(name) {
            Value::Text(x) => x,
            v => panic!("parameter `{name}` is {v:?}, not text"),
        }
    }

    /// A choice parameter read as its registry's member (declare it with `T::NAMES` as the
    /// choices, so loading has already checked the name; the error is for hand-built sets).
    pub fn named<T: crate::Named>(&self, name: &str) -> Result<T, crate::Error> {
        T::parse_name(self.text(name)).map_err(|_| {
            crate::Error::param(
                name,
                self.text(name),
                format!("one of {}", T::NAMES.join(", ")),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "alpha",
            kind: Kind::Float {
                min: 0.0,
                max: 5.0,
                min_open: false,
                max_open: false,
            },
            default: DefaultValue::Float(0.8),
            help: "",
            unit: "",
        },
        ParamSpec {
            name: "n",
            kind: Kind::Int { min: 1, max: 10 },
            default: DefaultValue::Int(3),
            help: "",
            unit: "",
        },
    ];

    #[test]
    fn resolve_fills_defaults_and_checks_ranges() {
        let mut g = BTreeMap::new();
        g.insert("alpha".to_string(), Value::Int(1));
        let p = Params::resolve(SPECS, &g).unwrap();
        assert_eq!(p.float("alpha"), 1.0);
        assert_eq!(p.int("n"), 3);
        g.insert("alpha".into(), Value::Float(-0.5));
        let e = Params::resolve(SPECS, &g).unwrap_err().to_string();
        assert!(
            e.contains("alpha") && e.contains("-0.5") && e.contains("from 0 to 5"),
            "{e}"
        );
        g.insert("alpha".into(), Value::Text("x".into()));
        assert!(Params::resolve(SPECS, &g).is_err());
        let mut g = BTreeMap::new();
        g.insert("beta".to_string(), Value::Int(1));
        let e = Params::resolve(SPECS, &g).unwrap_err().to_string();
        assert!(e.contains("beta") && e.contains("alpha, n"), "{e}");
    }
}
