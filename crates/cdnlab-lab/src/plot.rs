//! Line charts, written by hand as SVG: axes (linear or log, powers of ten as 10^k), ticks, one
//! line per series with 95% CI error bars, a colour-blind-safe colour and a marker shape per
//! series, markers dodged sideways so equal series stay visible, and a legend outside the plot.
//! [`png`] renders the SVG with resvg and a built-in font (DejaVu Sans), so PNGs look the same
//! on any machine.

use crate::error::{Error, Result};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One line of a chart: points (x, mean, and the ends of its 95% interval; NaN for none).
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64, f64, f64)>,
    /// Line style index (one per metric): solid, dashed, dotted, ...
    pub dash: usize,
}

const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// A series' `dash` for markers without a line: a scatter (points that are not a curve, such
/// as one per network against a property of the network).
pub const SCATTER: usize = usize::MAX;

/// A chart to draw.
#[derive(Debug, Clone, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    /// Limits the y axis may not pass (a share: (0, 1)); a constant series then gets the whole
    /// range rather than a padded sliver around it.
    pub y_bounds: Option<(f64, f64)>,
    pub series: Vec<Series>,
    /// Vertical reference lines (x, label): a threshold, a claimed range's end.
    pub marks: Vec<(f64, String)>,
}

impl Chart {
    /// A chart of shares (a miss ratio, a CDF: y in [0, 1]) against a log x axis, such as the
    /// trace commands draw.
    pub fn shares(title: String, x_label: &str, y_label: &str, series: Vec<Series>) -> Self {
        Chart {
            title,
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x: true,
            y_bounds: Some((0.0, 1.0)),
            series,
            ..Chart::default()
        }
    }
}

const W: f64 = 760.0;
const H: f64 = 480.0;
const LEFT: f64 = 75.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 45.0;
const BOTTOM: f64 = 60.0;
/// From the plot's right edge to a legend label's first character.
const LEGEND_TEXT: f64 = 15.0 + 28.0;
/// A generous width of one character of the 12 px sans-serif text (DejaVu Sans averages about
/// 6.6 px over lower case, digits and punctuation).
const CHAR_WIDTH: f64 = 7.0;
/// Paul Tol's "muted" scheme (colour-blind safe, distinct in greyscale by marker), then black
/// and grey for series 10 and 11; markers tell series apart beyond that.
const COLORS: [&str; 11] = [
    "#332288", "#CC6677", "#117733", "#DDCC77", "#88CCEE", "#882255", "#44AA99", "#999933",
    "#AA4499", "#000000", "#777777",
];

/// Marker shapes, one per series (a cycle of a different length from the colours'), drawn
/// centred at (0, 0) with size about 8 px.
const MARKERS: [&str; 7] = [
    r#"<circle r="3.5"/>"#,
    r#"<rect x="-3.2" y="-3.2" width="6.4" height="6.4"/>"#,
    r#"<path d="M0,-4.2 L3.8,3 L-3.8,3 Z"/>"#,
    r#"<path d="M0,-4.4 L4.4,0 L0,4.4 L-4.4,0 Z"/>"#,
    r#"<path d="M0,4.2 L3.8,-3 L-3.8,-3 Z"/>"#,
    r#"<path d="M-4,-1.3 H-1.3 V-4 H1.3 V-1.3 H4 V1.3 H1.3 V4 H-1.3 V1.3 H-4 Z"/>"#,
    r#"<path d="M-3.5,-1.7 L-1.7,-3.5 L0,-1.8 L1.7,-3.5 L3.5,-1.7 L1.8,0 L3.5,1.7 L1.7,3.5 L0,1.8 L-1.7,3.5 L-3.5,1.7 L-1.8,0 Z"/>"#,
];

/// Horizontal offset, in pixels, between neighbouring series' markers and error bars, so that
/// series with equal values stay visible side by side.
const DODGE: f64 = 3.0;

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
    fn new(vals: impl Iterator<Item = f64>, log: bool, bounds: Option<(f64, f64)>) -> Axis {
        let bounds = bounds.filter(|b| !log && b.0 < b.1);
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
            if let Some(b) = bounds {
                return Axis {
                    lo: b.0,
                    hi: b.1,
                    log,
                };
            }
            let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
            lo -= pad;
            hi += pad;
        }
        let pad = (hi - lo) * 0.05;
        let (mut lo, mut hi) = (lo - pad, hi + pad);
        if let Some(b) = bounds {
            (lo, hi) = (lo.max(b.0), hi.min(b.1));
        }
        Axis { lo, hi, log }
    }

    /// Whether data value v lies on the axis.
    fn contains(&self, v: f64) -> bool {
        self.frac(v)
            .is_some_and(|f| (-1e-9..=1.0 + 1e-9).contains(&f))
    }

    /// Position in 0..1 of data value v (None if not drawable).
    fn frac(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.log && v <= 0.0) {
            return None;
        }
        let t = if self.log { v.log10() } else { v };
        Some((t - self.lo) / (self.hi - self.lo))
    }

    /// Tick values (data units). A log axis gets its powers of ten, and 2 and 5 times them
    /// when fewer than three powers fall in range.
    fn ticks(&self) -> Vec<f64> {
        if self.log && self.hi - self.lo >= 1.0 {
            let (a, b) = (self.lo.floor() as i32, self.hi.ceil() as i32);
            let decades: Vec<f64> = (a..=b)
                .map(|e| 10f64.powi(e))
                .filter(|v| self.contains(*v))
                .collect();
            if decades.len() >= 3 {
                return decades;
            }
            return (a..=b)
                .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
                .filter(|v| self.contains(*v))
                .collect();
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

/// How an axis labels its ticks, the same way for every tick (never a mix of `0.001` and
/// `1e-4`): powers of ten as 10 with a superscript exponent, or plain decimals.
fn use_powers(a: &Axis, ticks: &[f64]) -> bool {
    a.log
        && ticks
            .iter()
            .any(|t| *t != 0.0 && (t.abs() >= 1e5 || t.abs() < 1e-3))
        && ticks
            .iter()
            .all(|t| (t.log10() - t.log10().round()).abs() < 1e-9)
}

/// A tick label (see [`use_powers`]).
fn tick_label(v: f64, powers: bool) -> String {
    if powers {
        let e = v.log10().round() as i32;
        return format!(r#"10<tspan dy="-5" font-size="9">{e}</tspan>"#);
    }
    fmt_tick(v)
}

fn fmt_tick(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        format!("{v:.0e}")
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A point in pixels: x, y, and its error bar's ends (if any).
type Placed = (f64, f64, Option<(f64, f64)>);

/// Renders the chart as an SVG document.
pub fn svg(c: &Chart) -> String {
    let pts = || c.series.iter().flat_map(|s| s.points.iter());
    let xa = Axis::new(
        pts().map(|p| p.0).chain(c.marks.iter().map(|m| m.0)),
        c.log_x,
        None,
    );
    let ya = Axis::new(pts().flat_map(|p| [p.1, p.2, p.3]), c.log_y, c.y_bounds);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    // The legend sits right of the plot; a long label widens the image rather than run off it.
    let longest = c.series.iter().map(|s| s.label.chars().count()).max();
    let w = W.max(LEFT + pw + LEGEND_TEXT + longest.unwrap_or(0) as f64 * CHAR_WIDTH + 10.0);
    let px = |x: f64| xa.frac(x).map(|f| LEFT + f * pw);
    let py = |y: f64| ya.frac(y).map(|f| TOP + (1.0 - f) * ph);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{H}" viewBox="0 0 {w} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="25" text-anchor="middle" font-size="15">{}</text>"#,
        LEFT + pw / 2.0,
        esc(&c.title)
    );
    let (x_ticks, y_ticks) = (xa.ticks(), ya.ticks());
    let (x_powers, y_powers) = (use_powers(&xa, &x_ticks), use_powers(&ya, &y_ticks));
    for t in x_ticks {
        if let Some(x) = px(t) {
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e5e5e5"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + ph,
                TOP + ph + 18.0,
                tick_label(t, x_powers)
            );
        }
    }
    for t in y_ticks {
        if let Some(y) = py(t) {
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                tick_label(t, y_powers)
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
    // Marks under the data: a dashed grey line, its label inside the plot near the top (left of
    // the line in the right half, so it never leaves the plot area), staggered downwards.
    for (i, (x, label)) in c.marks.iter().enumerate() {
        if let Some(x) = px(*x).filter(|x| (LEFT..=LEFT + pw).contains(x)) {
            let (tx, anchor) = if x > LEFT + pw / 2.0 {
                (x - 4.0, "end")
            } else {
                (x + 4.0, "start")
            };
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#555" stroke-dasharray="5 4"/><text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" font-size="11" fill="#333">{}</text>"##,
                TOP + ph,
                TOP + 14.0 + 14.0 * i as f64,
                esc(label)
            );
        }
    }
    let n = c.series.len() as f64;
    // Colour and marker by the series' place in the chart, so no two look alike.
    let style = |i: usize, ser: &Series| {
        let col = COLORS[i % COLORS.len()];
        let dash = match DASHES[ser.dash % DASHES.len()] {
            "" => String::new(),
            d => format!(r#" stroke-dasharray="{d}""#),
        };
        (col, dash, MARKERS[i % MARKERS.len()])
    };
    // Each series' points in pixels, shifted sideways by its dodge.
    let placed: Vec<Vec<Placed>> = c
        .series
        .iter()
        .enumerate()
        .map(|(i, ser)| {
            let dx = (i as f64 - (n - 1.0) / 2.0) * DODGE;
            ser.points
                .iter()
                .filter_map(|&(x, y, lo, hi)| {
                    let (x, yy) = (px(x)?, py(y)?);
                    // Bars end at the plot's edges: a share's bar never crosses the frame
                    // into the title or the axis labels.
                    let inside = |v: f64| v.clamp(TOP, TOP + ph);
                    let bar = (lo.is_finite() && hi.is_finite() && hi > lo)
                        .then(|| Some((inside(py(lo)?), inside(py(hi)?))))
                        .flatten();
                    Some((x + dx, yy, bar))
                })
                .collect()
        })
        .collect();
    // Lines first, then every series' bars and markers on top, so no line hides a marker.
    for (i, ser) in c.series.iter().enumerate() {
        let (col, dash, _) = style(i, ser);
        if ser.dash == SCATTER {
            continue;
        }
        let path: Vec<String> = placed[i]
            .iter()
            .enumerate()
            .map(|(j, (x, y, _))| format!("{}{x:.1},{y:.1}", if j == 0 { "M" } else { "L" }))
            .collect();
        if !path.is_empty() {
            let _ = writeln!(
                s,
                r#"<path d="{}" fill="none" stroke="{col}" stroke-width="1.6"{dash}/>"#,
                path.join(" ")
            );
        }
    }
    for (i, ser) in c.series.iter().enumerate() {
        let (col, _, marker) = style(i, ser);
        for &(x, y, bar) in &placed[i] {
            if let Some((a, b)) = bar {
                let _ = writeln!(
                    s,
                    r#"<path d="M{x:.1},{a:.1} L{x:.1},{b:.1} M{:.1},{a:.1} L{:.1},{a:.1} M{:.1},{b:.1} L{:.1},{b:.1}" stroke="{col}"/>"#,
                    x - 3.0,
                    x + 3.0,
                    x - 3.0,
                    x + 3.0
                );
            }
            let _ = writeln!(
                s,
                r#"<g transform="translate({x:.1} {y:.1})" fill="{col}" stroke="white" stroke-width="0.6">{marker}</g>"#
            );
        }
        let ly = TOP + 10.0 + 20.0 * i as f64;
        let lx = LEFT + pw + 15.0;
        let (_, dash, _) = style(i, ser);
        let stroke = if ser.dash == SCATTER { "none" } else { col };
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{stroke}" stroke-width="2"{dash}/><g transform="translate({} {ly})" fill="{col}" stroke="white" stroke-width="0.6">{marker}</g><text x="{}" y="{}">{}</text>"#,
            lx + 22.0,
            lx + 11.0,
            lx + LEGEND_TEXT - 15.0,
            ly + 4.0,
            esc(&ser.label)
        );
    }
    s.push_str("</svg>\n");
    s
}

cdnlab::registry! {
    /// Which files a plot is written as.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Format: "plot format" {
        Svg => "svg": "an SVG only",
        Png => "png": "a PNG only",
        Both => "both": "an SVG and the PNG beside it",
    }
}

/// Checks a `--plot FILE` flag before any work: it must end in .svg or .png (both are written);
/// its folder is created. Returns the SVG's path.
pub fn plot_target(path: &Path) -> Result<PathBuf> {
    if path.extension().is_none_or(|e| e != "svg" && e != "png") {
        return Err(Error::Usage(format!(
            "--plot {}: the file must end in .svg or .png (both are written)",
            path.display()
        )));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::files::ensure_dir(dir)?;
    }
    Ok(path.with_extension("svg"))
}

/// A miss-ratio curve: miss ratio against the cache size in `unit` (log axis), one series a
/// line, as an SVG at `svg_path` and the PNG beside it (twice the size); returns the files
/// written.
pub fn write_mrc(
    title: String,
    unit: &str,
    series: Vec<Series>,
    svg_path: &Path,
) -> Result<Vec<PathBuf>> {
    let chart = Chart::shares(title, &format!("cache size ({unit})"), "miss ratio", series);
    write_chart(&chart, svg_path, Format::Both, 2.0)
}

/// Writes `chart` to `svg_path` and/or the PNG beside it (same stem; at `scale` x 760 x 480
/// px), each atomically; returns the files written. Every command that draws goes through
/// here.
pub fn write_chart(
    chart: &Chart,
    svg_path: &Path,
    format: Format,
    scale: f32,
) -> Result<Vec<PathBuf>> {
    let svg = svg(chart);
    let mut written = Vec::new();
    if format != Format::Png {
        crate::files::write_atomic(svg_path, svg.as_bytes())?;
        written.push(svg_path.to_path_buf());
    }
    if format != Format::Svg {
        let png = png(&svg, scale)
            .map_err(|e| Error::Failed(format!("plot {}: {e}", svg_path.display())))?;
        let f = svg_path.with_extension("png");
        crate::files::write_atomic(&f, &png)?;
        written.push(f);
    }
    Ok(written)
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
            y_bounds: None,
            series: vec![Series {
                label: "s&1".into(),
                points: vec![
                    (1e-5, 0.1, 0.09, 0.11),
                    (1e-4, 0.5, f64::NAN, f64::NAN),
                    (1e-3, 0.9, 0.88, 0.92),
                ],
                dash: 1,
            }],
            marks: Vec::new(),
        };
        let out = svg(&c);
        assert!(out.starts_with("<svg") && out.ends_with("</svg>\n"));
        assert!(out.contains("a &lt; b") && out.contains("s&amp;1"));
        // Three markers and the legend's.
        assert_eq!(out.matches("<circle").count(), 4);
        assert!(out.contains("stroke-dasharray"));
        assert!(out.contains("stroke-dasharray"));
        for e in [-5, -4, -3] {
            let t = format!(r#">10<tspan dy="-5" font-size="9">{e}</tspan>"#);
            assert!(out.contains(&t), "missing tick 10^{e}");
        }
        let labels = x_tick_labels(&out);
        assert!(
            labels.iter().all(|l| l.starts_with("10<tspan")),
            "every tick as 10^k: {labels:?}"
        );
    }

    #[test]
    fn error_bars_stay_inside_the_plot_area() {
        // A share near 1 with a wide interval: its bar would run through the title.
        let c = Chart {
            title: "t".into(),
            y_bounds: Some((0.0, 1.0)),
            series: vec![Series {
                label: "s".into(),
                points: vec![
                    (1.0, 0.95, 0.55, 1.35),
                    (2.0, 0.05, -0.35, 0.45),
                    (3.0, 0.5, 0.4, 0.6),
                ],
                dash: 0,
            }],
            ..Chart::default()
        };
        let out = svg(&c);
        let bars: Vec<(f64, f64)> = out
            .lines()
            .filter(|l| l.starts_with("<path d=\"M") && l.contains(" M") && !l.contains("fill"))
            .map(|l| {
                let ys: Vec<f64> = l
                    .split(['M', 'L', ' ', '"'])
                    .filter_map(|p| p.split_once(',').and_then(|(_, y)| y.parse().ok()))
                    .collect();
                let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (lo, hi)
            })
            .collect();
        assert_eq!(bars.len(), 3, "{out}");
        for (lo, hi) in bars {
            assert!(
                lo >= TOP - 1e-9 && hi <= H - BOTTOM + 1e-9,
                "bar {lo}..{hi}"
            );
        }
    }

    #[test]
    fn long_legend_labels_widen_the_image() {
        let chart = |label: &str| Chart {
            series: vec![Series {
                label: label.into(),
                points: vec![(1.0, 0.5, f64::NAN, f64::NAN)],
                dash: 0,
            }],
            ..Chart::default()
        };
        let width = |out: &str| -> f64 {
            let at = out.find("width=\"").expect("a width") + 7;
            out[at..].split('"').next().unwrap().parse().unwrap()
        };
        assert_eq!(width(&svg(&chart("short"))), W);
        // cache-che's legend: this label ran off the right edge of the old fixed width.
        let label = "exact_hit_ratio, alpha = 0.6";
        let out = svg(&chart(label));
        let text_x = W - RIGHT + LEGEND_TEXT;
        assert!(
            width(&out) >= text_x + label.len() as f64 * CHAR_WIDTH,
            "{out}"
        );
        assert!(out.contains(&format!(r#"<text x="{text_x}""#)), "{out}");
    }

    fn x_tick_labels(out: &str) -> Vec<String> {
        out.lines()
            .filter(|l| l.contains(r#"text-anchor="middle">"#) && l.starts_with("<line"))
            .map(|l| {
                l.split(r#"text-anchor="middle">"#)
                    .nth(1)
                    .unwrap()
                    .split("</text>")
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    /// Log axes label every tick the same way: plain numbers where they are readable (with 2
    /// and 5 between powers of ten over less than two decades), 10^k otherwise.
    #[test]
    fn log_ticks_are_consistent() {
        let chart = |xs: &[f64]| Chart {
            log_x: true,
            series: vec![Series {
                label: "s".into(),
                points: xs.iter().map(|&x| (x, 1.0, f64::NAN, f64::NAN)).collect(),
                dash: 0,
            }],
            ..Chart::default()
        };
        assert_eq!(
            x_tick_labels(&svg(&chart(&[5.0, 10.0, 20.0, 40.0, 80.0]))),
            ["5", "10", "20", "50"]
        );
        assert_eq!(
            x_tick_labels(&svg(&chart(&[10.0, 100.0, 1000.0]))),
            ["10", "100", "1000"]
        );
        let wide = x_tick_labels(&svg(&chart(&[1e-4, 1e-2, 1.0])));
        assert_eq!(wide.len(), 5, "{wide:?}");
        assert!(wide.iter().all(|l| l.starts_with("10<tspan")), "{wide:?}");
    }

    /// A share that is the same everywhere is drawn on its whole range (0 to 1), not on a
    /// padded sliver (0.9 to 1.1) past its limit; other data is clamped to the bounds.
    #[test]
    fn bounded_axes_stay_within_their_limits() {
        let a = Axis::new([1.0, 1.0].into_iter(), false, Some((0.0, 1.0)));
        assert_eq!((a.lo, a.hi), (0.0, 1.0));
        let a = Axis::new([0.2, 1.0].into_iter(), false, Some((0.0, 1.0)));
        assert!(a.lo < 0.2 && a.lo > 0.1 && a.hi == 1.0, "{} {}", a.lo, a.hi);
        let a = Axis::new([1.0, 1.0].into_iter(), false, None);
        assert!(a.hi > 1.0);
    }

    /// Series with the same values stay visible: each has its own colour and marker, and their
    /// markers sit side by side (dodged), not on top of each other.
    #[test]
    fn equal_series_are_told_apart() {
        let series: Vec<Series> = (0..9)
            .map(|i| Series {
                label: format!("s{i}"),
                points: vec![(1.0, 0.5, 0.4, 0.6), (2.0, 0.7, 0.6, 0.8)],
                dash: 0,
            })
            .collect();
        let out = svg(&Chart {
            series,
            ..Chart::default()
        });
        let mut styles = std::collections::HashSet::new();
        let mut xs = std::collections::HashSet::new();
        for g in out.split("<g transform=\"translate(").skip(1) {
            let (pos, rest) = g.split_once(')').unwrap();
            let x = pos.split(' ').next().unwrap().to_string();
            let fill = rest
                .split("fill=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let shape = rest.split('>').nth(1).unwrap().to_string();
            styles.insert((fill.to_string(), shape));
            xs.insert(x);
        }
        assert_eq!(styles.len(), 9, "a colour and marker per series");
        // 9 series x 2 points at distinct x, plus the legend's one x.
        assert_eq!(xs.len(), 19, "{xs:?}");
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::new([0.0, 1.0].into_iter(), false, None);
        let t = a.ticks();
        assert!(t.contains(&0.0) && t.contains(&1.0), "{t:?}");
    }
}

/// DejaVu Sans (Bitstream Vera licence, assets/DejaVuSans.LICENSE), built in so that a PNG's
/// text renders the same on a machine without system fonts.
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Renders an SVG document (as [`svg`] writes) to PNG bytes at `scale` x its size (2 gives
/// 1520 x 960 px for a chart: sharp on slides and in print).
pub fn png(svg_text: &str, scale: f32) -> std::result::Result<Vec<u8>, String> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_font_data(FONT.to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    let tree = usvg::Tree::from_str(svg_text, &opt).map_err(|e| format!("SVG: {e}"))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or("an empty chart")?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("an empty chart")?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| format!("PNG: {e}"))
}

#[cfg(test)]
mod png_tests {
    use super::*;

    /// The PNG has the chart's size x the scale and its text is drawn (with the built-in font):
    /// the title's band has dark pixels, which a renderer without a font leaves white.
    #[test]
    fn png_draws_the_chart_and_its_text() {
        let c = Chart {
            title: "Title text".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                label: "s".into(),
                points: vec![(1.0, 1.0, 0.9, 1.1), (2.0, 2.0, 1.9, 2.1)],
                dash: 0,
            }],
            ..Chart::default()
        };
        let bytes = png(&svg(&c), 1.0).unwrap();
        let pixmap = resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap();
        assert_eq!((pixmap.width(), pixmap.height()), (W as u32, H as u32));
        // The title sits around y = 25, centred over the plot area.
        let dark = (12..30)
            .flat_map(|y| (250..450).map(move |x| (x, y)))
            .filter(|&(x, y)| pixmap.pixel(x, y).is_some_and(|p| p.red() < 100))
            .count();
        assert!(dark > 50, "{dark} dark pixels where the title is");
        let no_text = png(&svg(&c).replace("Title text", ""), 1.0).unwrap();
        let blank = resvg::tiny_skia::Pixmap::decode_png(&no_text).unwrap();
        let dark_blank = (12..30)
            .flat_map(|y| (250..450).map(move |x| (x, y)))
            .filter(|&(x, y)| blank.pixel(x, y).is_some_and(|p| p.red() < 100))
            .count();
        assert_eq!(dark_blank, 0);
    }
}
