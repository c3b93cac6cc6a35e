//! SVG line charts, written by hand: axes (linear or log), ticks, one line per series with 95%
//! CI error bars, and a legend. Text is SVG `<text>`, drawn by the viewer, so no font files are
//! needed and the output is plain, diffable text.

use std::fmt::Write;

/// One line of a chart: points (x, mean, CI half-width; NaN for none).
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64, f64)>,
    /// Colour index (one per value of the plot's series parameter).
    pub color: usize,
    /// Line style index (one per metric): solid, dashed, dotted, ...
    pub dash: usize,
}

const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// A chart to draw.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

const W: f64 = 760.0;
const H: f64 = 480.0;
const LEFT: f64 = 75.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 45.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Escapes text for SVG and HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An axis: data range mapped to pixels, linear or log10.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn new(vals: impl Iterator<Item = f64>, log: bool) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in vals.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
            let v = if log { v.log10() } else { v };
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if hi - lo < 1e-12 {
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            lo -= pad;
            hi += pad;
        }
        let pad = (hi - lo) * 0.05;
        Axis {
            lo: lo - pad,
            hi: hi + pad,
            log,
        }
    }

    /// Position in 0..1 of data value v (None if not drawable).
    fn frac(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.log && v <= 0.0) {
            return None;
        }
        let t = if self.log { v.log10() } else { v };
        Some((t - self.lo) / (self.hi - self.lo))
    }

    /// Tick values (data units).
    fn ticks(&self) -> Vec<f64> {
        if self.log && self.hi - self.lo >= 1.0 {
            let (a, b) = (self.lo.ceil() as i32, self.hi.floor() as i32);
            return (a..=b).map(|e| 10f64.powi(e)).collect();
        }
        let (lo, hi) = if self.log {
            (10f64.powf(self.lo), 10f64.powf(self.hi))
        } else {
            (self.lo, self.hi)
        };
        let raw = (hi - lo) / 6.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        let mut t = (lo / step).ceil() * step;
        let mut out = Vec::new();
        while t <= hi + step * 1e-9 && out.len() < 20 {
            out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
            t += step;
        }
        out
    }
}

fn fmt_tick(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        format!("{v:.0e}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Renders the chart as an SVG document.
pub fn svg(c: &Chart) -> String {
    let pts = || c.series.iter().flat_map(|s| s.points.iter());
    let xa = Axis::new(pts().map(|p| p.0), c.log_x);
    let ya = Axis::new(
        pts().flat_map(|p| {
            let e = if p.2.is_finite() { p.2 } else { 0.0 };
            [p.1 - e, p.1 + e]
        }),
        c.log_y,
    );
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let px = |x: f64| xa.frac(x).map(|f| LEFT + f * pw);
    let py = |y: f64| ya.frac(y).map(|f| TOP + (1.0 - f) * ph);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="25" text-anchor="middle" font-size="15">{}</text>"#,
        LEFT + pw / 2.0,
        esc(&c.title)
    );
    for t in xa.ticks() {
        if let Some(x) = px(t) {
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e5e5e5"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + ph,
                TOP + ph + 18.0,
                fmt_tick(t)
            );
        }
    }
    for t in ya.ticks() {
        if let Some(y) = py(t) {
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                fmt_tick(t)
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + pw / 2.0,
        H - 15.0,
        esc(&c.x_label)
    );
    let _ = writeln!(
        s,
        r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + ph / 2.0,
        esc(&c.y_label)
    );
    for (i, ser) in c.series.iter().enumerate() {
        let col = COLORS[ser.color % COLORS.len()];
        let dash = match DASHES[ser.dash % DASHES.len()] {
            "" => String::new(),
            d => format!(r#" stroke-dasharray="{d}""#),
        };
        let mut path = String::new();
        for &(x, y, e) in &ser.points {
            let (Some(x), Some(yy)) = (px(x), py(y)) else {
                continue;
            };
            let _ = write!(
                path,
                "{}{x:.1},{yy:.1}",
                if path.is_empty() { "M" } else { " L" }
            );
            let _ = writeln!(
                s,
                r#"<circle cx="{x:.1}" cy="{yy:.1}" r="3" fill="{col}"/>"#
            );
            if e.is_finite() && e > 0.0 {
                if let (Some(a), Some(b)) = (py(y - e), py(y + e)) {
                    let _ = writeln!(
                        s,
                        r#"<path d="M{x:.1},{a:.1} L{x:.1},{b:.1} M{:.1},{a:.1} L{:.1},{a:.1} M{:.1},{b:.1} L{:.1},{b:.1}" stroke="{col}"/>"#,
                        x - 3.0,
                        x + 3.0,
                        x - 3.0,
                        x + 3.0
                    );
                }
            }
        }
        if !path.is_empty() {
            let _ = writeln!(
                s,
                r#"<path d="{path}" fill="none" stroke="{col}" stroke-width="1.8"{dash}/>"#
            );
        }
        let ly = TOP + 10.0 + 20.0 * i as f64;
        let lx = LEFT + pw + 15.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{col}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"#,
            lx + 22.0,
            lx + 28.0,
            ly + 4.0,
            esc(&ser.label)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_series_ticks_and_escapes_text() {
        let c = Chart {
            title: "a < b".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            log_y: false,
            series: vec![Series {
                label: "s&1".into(),
                points: vec![
                    (10.0, 0.1, 0.01),
                    (100.0, 0.5, f64::NAN),
                    (1000.0, 0.9, 0.02),
                ],
                color: 0,
                dash: 1,
            }],
        };
        let out = svg(&c);
        assert!(out.starts_with("<svg") && out.ends_with("</svg>\n"));
        assert!(out.contains("a &lt; b") && out.contains("s&amp;1"));
        assert_eq!(out.matches("<circle").count(), 3);
        assert!(out.contains("stroke-dasharray"));
        assert!(out.contains("stroke-dasharray"));
        for t in [">10<", ">100<", ">1000<"] {
            assert!(out.contains(t), "missing tick {t}");
        }
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::new([0.0, 1.0].into_iter(), false);
        let t = a.ticks();
        assert!(t.contains(&0.0) && t.contains(&1.0), "{t:?}");
    }
}
