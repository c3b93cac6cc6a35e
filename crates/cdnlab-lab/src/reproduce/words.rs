//! A claim's measurement in words for the report: numbers rounded to what their uncertainty
//! supports (`0.73 ± 0.02`, ± a 95% half-width), plain counts, fits and trends as sentences.
//! The full-precision values stay in claims.json.

use super::Monotone;
use cdnlab::stats::LineFit;

/// `x` to `digits` significant digits, without trailing zeros (`0.0065`, `1200`, `3.1e-5`).
pub fn sig(x: f64, digits: u32) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "n/a".into()
        } else if x > 0.0 {
            "∞".into()
        } else {
            "-∞".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..=6).contains(&mag) {
        let s = format!("{:.*e}", digits.saturating_sub(1) as usize, x);
        // 1.50e-5 -> 1.5e-5
        return match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        };
    }
    let decimals = (digits as i32 - 1 - mag).max(0) as usize;
    let scale = 10f64.powi(digits as i32 - 1 - mag);
    let rounded = (x * scale).round() / scale;
    trim(&format!("{rounded:.decimals$}"))
}

fn trim(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// `mean ± half`, the half-width to one significant digit (two when they start with 1 or 2,
/// where one digit would change it by up to a half) and the mean to the same decimal place. A
/// half-width of 0 (every run equal) gives the mean alone, to 4 digits; NaN (one run) gives
/// the mean to 3 digits.
pub fn pm(mean: f64, half: f64) -> String {
    if !mean.is_finite() {
        return sig(mean, 3);
    }
    if half.is_nan() {
        return sig(mean, 3);
    }
    if half == 0.0 {
        return sig(mean, 4);
    }
    if half < 1e-4 * mean.abs() {
        // Rounding noise of identical runs, or a very tight interval: the mean to 5 digits.
        return format!("{} ± {}", sig(mean, 5), sig(half, 1));
    }
    let mag = half.abs().log10().floor() as i32;
    let lead = (half.abs() / 10f64.powi(mag)).floor();
    let digits = if lead < 3.0 { 2 } else { 1 };
    let place = digits - 1 - mag; // decimal places kept
    let scale = 10f64.powi(place);
    let (m, h) = (
        (mean * scale).round() / scale,
        (half * scale).round() / scale,
    );
    if place > 0 {
        let p = place as usize;
        format!("{m:.p$} ± {h:.p$}")
    } else {
        format!("{m:.0} ± {h:.0}")
    }
}

/// A mean with its 95% interval from a summary: `mean ± half` when the interval is the t
/// interval, else `mean (95%: lo to hi)` (Wilson's for yes/no outcomes, or one clipped to
/// [0, 1]), so no interval is read as leaving the values the metric can take.
pub fn ci(s: &cdnlab::stats::Summary) -> String {
    let symmetric = |end: f64| (end - s.ci95).abs() <= 1e-12 * s.ci95.abs().max(1.0);
    if !s.lo.is_finite() || (symmetric(s.mean - s.lo) && symmetric(s.hi - s.mean)) {
        return pm(s.mean, s.ci95);
    }
    format!(
        "{} (95%: {} to {})",
        sig(s.mean, 3),
        sig(s.lo, 2),
        sig(s.hi, 2)
    )
}

/// "none of the 400 runs" / "3 of 400 runs".
pub fn of(k: usize, n: usize, what: &str) -> String {
    if k == 0 {
        format!("none of the {n} {what}")
    } else if k == n {
        format!("all {n} {what}")
    } else {
        format!("{k} of {n} {what}")
    }
}

/// A line fit: "slope -12 ± 3 per unit of ln n (chi-square 4.1 on 3 degrees of freedom)".
pub fn fit(f: &Option<LineFit>, per: &str) -> String {
    match f {
        Some(f) => format!(
            "slope {} per {per} (chi-square {} on {} degrees of freedom)",
            pm(f.slope, f.slope_ci95),
            sig(f.chi2, 2),
            f.dof
        ),
        None => "no fit (too few points)".into(),
    }
}

/// A monotone trend: "from the first to the last point -0.12 ± 0.02; largest step against the
/// trend 1.3 standard errors".
pub fn trend(m: &Option<Monotone>) -> String {
    match m {
        Some(m) => {
            let against = if m.worst_reverse_z == 0.0 {
                "no step against the trend".to_string()
            } else {
                format!(
                    "largest step against the trend {} standard errors",
                    sig(m.worst_reverse_z, 2)
                )
            };
            format!(
                "change from the first to the last point {}; {against}",
                pm(m.change, m.change_ci95)
            )
        }
        None => "no trend (too few points)".into(),
    }
}

/// Metric `y` against parameter `x` over `rows`, sorted by x: "tau 5: 0.13 ± 0.01, tau 10: ...".
pub fn points(
    sc: &crate::scenario::Scenario,
    rows: &[&crate::runner::SummaryRow],
    x: &str,
    y: &str,
) -> String {
    let mut v: Vec<(f64, String)> = rows
        .iter()
        .map(|r| (super::num(r, x), ci(super::summary(sc, r, y))))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    list(
        v.into_iter()
            .map(|(x0, s)| format!("{x} {}: {s}", sig(x0, 4))),
        12,
    )
}

/// Items joined with commas, at most `most` of them, then "and N more".
pub fn list<I: IntoIterator<Item = String>>(items: I, most: usize) -> String {
    let all: Vec<String> = items.into_iter().collect();
    if all.is_empty() {
        return "none".into();
    }
    let mut s = all[..all.len().min(most)].join(", ");
    if all.len() > most {
        s.push_str(&format!(" and {} more", all.len() - most));
    }
    s
}

/// Whether `s` shows a number with more digits than a reader can use (a sign of a raw float
/// leaking into the words): 6 or more significant digits after a decimal point.
#[cfg(test)]
pub fn overlong_number(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'.' && i > 0 && b[i - 1].is_ascii_digit() {
            let frac = &b[i + 1..];
            let digits = frac.iter().take_while(|c| c.is_ascii_digit()).count();
            let zero_int = b[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .all(|&c| c == b'0');
            let leading = if zero_int {
                frac[..digits].iter().take_while(|&&c| c == b'0').count()
            } else {
                0
            };
            if digits - leading >= 6 {
                let start = s[..i]
                    .rfind(|c: char| !c.is_ascii_digit() && c != '-')
                    .map_or(0, |p| p + 1);
                return Some(s[start..i + 1 + digits].to_string());
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_the_uncertainty() {
        assert_eq!(pm(0.7344999999999999, 0.0213), "0.734 ± 0.021");
        assert_eq!(pm(0.7344999999999999, 0.04), "0.73 ± 0.04");
        assert_eq!(pm(1234.5, 37.0), "1230 ± 40");
        assert_eq!(pm(1234.5, 170.0), "1230 ± 170");
        assert_eq!(pm(-12.345, 3.2), "-12 ± 3");
        assert_eq!(pm(0.5, 0.0), "0.5");
        assert_eq!(pm(0.03 - 4e-17, 5e-18), "0.03 ± 5e-18");
        assert_eq!(pm(0.5, f64::NAN), "0.5");
        assert_eq!(pm(3.0e-5, 1.2e-6), "0.0000300 ± 0.0000012");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(sig(0.006526753294810931, 2), "0.0065");
        assert_eq!(sig(0.7344999999999999, 3), "0.734");
        assert_eq!(sig(1200.0, 3), "1200");
        assert_eq!(sig(3.14159e-6, 2), "3.1e-6");
        assert_eq!(sig(1.5e9, 3), "1.5e9");
        assert_eq!(sig(0.0, 3), "0");
        assert_eq!(sig(f64::INFINITY, 3), "∞");
        assert_eq!(sig(2.0, 3), "2");
    }

    #[test]
    fn intervals_read_as_their_shape() {
        use cdnlab::stats::{Scale, Summary};
        let runs = [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(ci(&Summary::of(&runs)), "0.2 ± 0.3");
        assert_eq!(
            ci(&Summary::on(&runs, Scale::YesNo)),
            "0.2 (95%: 0.057 to 0.51)"
        );
        assert_eq!(ci(&Summary::on(&[3.0, 5.0], Scale::Free)), "4 ± 13");
    }

    #[test]
    fn counts_and_lists() {
        assert_eq!(of(0, 400, "runs"), "none of the 400 runs");
        assert_eq!(of(400, 400, "runs"), "all 400 runs");
        assert_eq!(of(3, 400, "runs"), "3 of 400 runs");
        let l = list((1..=5).map(|i| i.to_string()), 3);
        assert_eq!(l, "1, 2, 3 and 2 more");
        assert_eq!(list(Vec::<String>::new(), 3), "none");
    }

    #[test]
    fn overlong_numbers_are_found() {
        assert_eq!(
            overlong_number("measured 0.7344999999999999 of it").as_deref(),
            Some("0.7344999999999999")
        );
        assert_eq!(
            overlong_number("0.73 ± 0.02, 1.5e-5, 0.0000300, 0.028868"),
            None
        );
        assert_eq!(overlong_number("12.123456").as_deref(), Some("12.123456"));
    }
}
