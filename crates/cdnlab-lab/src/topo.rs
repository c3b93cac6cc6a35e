//! Topology files: opening one (format named or sniffed, compressed files named as such),
//! attaching a demand series from a folder of SNDlib matrices, statistics as a row, a map-like
//! figure, and conversion between formats. The readers themselves are the library's
//! (`cdnlab::topology`); this adds the file system and the figures.

use crate::error::{Error, Result};
use crate::files::write_atomic;
use crate::plot::esc;
use cdnlab::Named;
use cdnlab::topology::{Coordinates, Format, ReadOptions, Topology, sndlib};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// A topology file to read.
#[derive(Debug, Clone)]
pub struct TopoInput {
    pub path: PathBuf,
    /// None: sniffed from the first bytes, else from the extension.
    pub format: Option<Format>,
    pub options: ReadOptions,
}

/// Names a compressed file's compression from its first bytes.
pub fn compression(head: &[u8]) -> Option<(&'static str, &'static str)> {
    let magic: [(&[u8], &str, &str); 5] = [
        (&[0x1f, 0x8b], "gzip", "gunzip"),
        (&[0xfd, b'7', b'z', b'X', b'Z', 0], "xz", "unxz"),
        (&crate::trace::ZSTD_MAGIC, "zstd", "unzstd"),
        (b"BZh", "bzip2", "bunzip2"),
        (b"PK\x03\x04", "zip", "unzip"),
    ];
    magic
        .iter()
        .find(|(m, _, _)| head.starts_with(m))
        .map(|&(_, name, tool)| (name, tool))
}

fn open(path: &Path) -> Result<(BufReader<std::fs::File>, Vec<u8>)> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(Error::file(path, "a folder, not a file"));
    }
    let mut r = BufReader::with_capacity(64 * 1024, file);
    let head = r.fill_buf().map_err(|e| Error::io(path, e))?.to_vec();
    if let Some((name, tool)) = compression(&head) {
        return Err(Error::file(
            path,
            format!("a {name}-compressed file: decompress it first ({tool} FILE)"),
        ));
    }
    Ok((r, head))
}

/// The format of a file: as given, else as its first bytes say, else as its extension says.
fn format_of(path: &Path, given: Option<Format>, head: &[u8]) -> Result<Format> {
    given
        .or_else(|| Format::detect(head, &path.to_string_lossy()))
        .ok_or_else(|| {
            Error::file(
                path,
                format!(
                    "not a topology file cdnlab recognises (allowed formats: {}; name one with \
                     --format)",
                    Format::NAMES.join(", ")
                ),
            )
        })
}

/// Reads a topology file; errors name the file and the line.
pub fn load(input: &TopoInput) -> Result<Topology> {
    let path = &input.path;
    let (r, head) = open(path)?;
    let format = format_of(path, input.format, &head)?;
    let mut t = cdnlab::topology::read(r, format, input.options)
        .map_err(|e| Error::file(path, format!("{e} (read as {})", format.name())))?;
    if t.name.is_empty() {
        t.name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    Ok(t)
}

/// Parses SNDlib's granularity (`5min`, `15min`, `1h`, `1day`, `300s`) as seconds.
pub fn granularity_seconds(s: &str) -> Option<f64> {
    let s = s.trim().to_ascii_lowercase();
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.')?;
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let unit_s = match unit.trim() {
        "s" | "sec" | "second" | "seconds" => 1.0,
        "min" | "minute" | "minutes" | "m" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86400.0,
        _ => return None,
    };
    Some(n * unit_s).filter(|x| *x > 0.0)
}

/// Attaches a demand series: every file of folder `dir` (sorted by name) is one interval's
/// matrix in SNDlib's native or XML format (as SNDlib publishes Abilene's and GEANT's dynamic
/// demands). The interval is `interval` seconds, else the first file's META granularity.
pub fn attach_series(t: &mut Topology, dir: &Path, interval: Option<f64>) -> Result<usize> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::file(dir, "no demand files in the folder"));
    }
    let mut step = interval;
    let mut intervals = Vec::with_capacity(files.len());
    for (k, f) in files.iter().enumerate() {
        let (r, head) = open(f)?;
        let xml = match format_of(f, None, &head)? {
            Format::SndlibXml => true,
            Format::Sndlib => false,
            other => {
                return Err(Error::file(
                    f,
                    format!(
                        "a {} file: a demand series is SNDlib matrices (native or XML)",
                        other.name()
                    ),
                ));
            }
        };
        let m = sndlib::read_matrix(r, xml).map_err(|e| Error::file(f, e.to_string()))?;
        if step.is_none() {
            step = m
                .meta
                .iter()
                .find(|(k, _)| k == "granularity")
                .and_then(|(_, v)| granularity_seconds(v));
        }
        let Some(s) = step else {
            return Err(Error::file(
                f,
                "no META granularity: give the interval's length with --interval SECONDS",
            ));
        };
        intervals.push((k as f64 * s, m.entries));
    }
    let n = intervals.len();
    t.attach_series(intervals)
        .map_err(|e| Error::file(dir, e.to_string()))?;
    Ok(n)
}

/// The columns of [`stats_row`], for a CSV header.
pub const STATS_COLUMNS: [&str; 18] = [
    "name",
    "file",
    "nodes",
    "links",
    "min_degree",
    "mean_degree",
    "max_degree",
    "components",
    "diameter_hops",
    "diameter_km",
    "mean_hops",
    "total_length_km",
    "links_with_capacity",
    "total_capacity",
    "demand_pairs",
    "demand_total",
    "intervals",
    "coordinates",
];

/// One row of statistics (the columns of [`STATS_COLUMNS`]), numbers as plain text.
pub fn stats_row(t: &Topology, file: &Path) -> Vec<String> {
    let s = t.stats();
    let f = |x: f64| {
        if x == x.round() && x.abs() < 1e15 {
            format!("{}", x as i64)
        } else {
            format!("{x:.4}")
        }
    };
    vec![
        t.name.clone(),
        file.display().to_string(),
        s.nodes.to_string(),
        s.links.to_string(),
        s.min_degree.to_string(),
        f(s.mean_degree),
        s.max_degree.to_string(),
        s.components.to_string(),
        s.diameter_hops.to_string(),
        f(s.diameter_length),
        f(s.mean_hops),
        f(s.total_length),
        s.links_with_capacity.to_string(),
        f(s.total_capacity),
        s.demand_pairs.to_string(),
        f(s.demand_total),
        s.intervals.to_string(),
        match t.coordinates {
            Coordinates::Geographic => "geographic",
            Coordinates::Planar => "planar",
        }
        .to_string(),
    ]
}

/// What `convert` would lose writing `t` as `format`, in words (empty: nothing).
pub fn losses(t: &Topology, format: Format) -> Vec<String> {
    let mut lost = Vec::new();
    let demands = t.demands.as_ref().map_or(0, |d| d.entries.len());
    if format == Format::Gml && demands > 0 {
        lost.push(format!(
            "{demands} demands (GML has no place for a demand matrix)"
        ));
    }
    if format != Format::Json && !t.series.is_empty() {
        lost.push(format!(
            "a demand series of {} intervals (only json holds one)",
            t.series.len()
        ));
    }
    if format == Format::Sndlib {
        // SNDlib has no lengths or delays: a reader derives them from the coordinates.
        let derived = |l: &cdnlab::topology::Link| {
            let (p, q) = (t.nodes[l.a].pos, t.nodes[l.b].pos);
            let len = match t.coordinates {
                Coordinates::Geographic => cdnlab::topology::great_circle_km(p, q),
                Coordinates::Planar => (p[0] - q[0]).hypot(p[1] - q[1]),
            };
            (l.length - len).abs() > 0.01 * len.max(1e-9)
                || (t.coordinates == Coordinates::Geographic
                    && (l.delay - len / cdnlab::topology::FIBRE_KM_PER_MS).abs()
                        > 0.01 * l.delay.max(1e-9))
        };
        let n = t.links.iter().filter(|l| derived(l)).count();
        if n > 0 {
            lost.push(format!(
                "the lengths or delays of {n} links that differ from the coordinates' by over 1% \
                 (SNDlib has no place for them)"
            ));
        }
        if t.links.iter().any(|l| l.loss > 0.0) {
            lost.push("link loss rates (SNDlib has no place for them)".into());
        }
    }
    lost
}

/// The formats `convert` writes.
pub const WRITABLE: [Format; 3] = [Format::Json, Format::Gml, Format::Sndlib];

/// Writes `t` to `path` in `format` (json, gml or sndlib), atomically; refuses to lose data
/// unless `lossy`.
pub fn convert(t: &Topology, path: &Path, format: Format, lossy: bool) -> Result<Vec<String>> {
    if !WRITABLE.contains(&format) {
        return Err(Error::Usage(format!(
            "cdnlab writes {} (not {})",
            WRITABLE.map(|f| f.name()).join(", "),
            format.name()
        )));
    }
    let lost = losses(t, format);
    if !lost.is_empty() && !lossy {
        return Err(Error::Usage(format!(
            "{} as {} would lose {}; pass --lossy to write it anyway, or write json, which holds \
             everything",
            path.display(),
            format.name(),
            lost.join("; ")
        )));
    }
    let mut bytes = Vec::new();
    let written = match format {
        Format::Json => cdnlab::topology::json::write(t, &mut bytes),
        Format::Gml => cdnlab::topology::gml::write(t, &mut bytes),
        _ => sndlib::write_native(t, &mut bytes),
    };
    written.map_err(|e| Error::io(path, e))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::files::ensure_dir(dir)?;
    }
    write_atomic(path, &bytes)?;
    Ok(lost)
}

const MAP_W: f64 = 960.0;
const MAP_H: f64 = 620.0;
const MARGIN: f64 = 40.0;
const LEGEND: f64 = 240.0;

/// A map-like figure of a topology: nodes at their coordinates (an equirectangular projection
/// scaled by the cosine of the mean latitude, so shapes look right away from the equator), links
/// as lines whose width grows with capacity (all alike when no capacity is known), nodes sized
/// by the demand that ends there when there is a matrix, names when there are at most 60 nodes.
pub fn map_svg(t: &Topology) -> String {
    let geo = t.coordinates == Coordinates::Geographic;
    let mean_lat = if geo && !t.nodes.is_empty() {
        t.nodes.iter().map(|n| n.pos[1]).sum::<f64>() / t.nodes.len() as f64
    } else {
        0.0
    };
    let kx = if geo {
        mean_lat.to_radians().cos().max(0.2)
    } else {
        1.0
    };
    // Plane coordinates: x right, y down (SNDlib's pixels); geographic: latitude up.
    let project = |p: [f64; 2]| (p[0] * kx, if geo { -p[1] } else { p[1] });
    let pts: Vec<(f64, f64)> = t.nodes.iter().map(|n| project(n.pos)).collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in &pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let (w, h) = ((x1 - x0).max(1e-9), (y1 - y0).max(1e-9));
    let (pw, ph) = (MAP_W - LEGEND - 2.0 * MARGIN, MAP_H - 2.0 * MARGIN - 30.0);
    let scale = (pw / w).min(ph / h);
    let (ox, oy) = (
        MARGIN + (pw - w * scale) / 2.0,
        MARGIN + 30.0 + (ph - h * scale) / 2.0,
    );
    let at = |i: usize| (ox + (pts[i].0 - x0) * scale, oy + (pts[i].1 - y0) * scale);
    let max_cap = t
        .links
        .iter()
        .filter_map(|l| l.capacity)
        .fold(0.0f64, f64::max);
    let width = |c: Option<f64>| match c {
        Some(c) if max_cap > 0.0 => 0.8 + 5.2 * (c / max_cap).sqrt(),
        _ => 1.4,
    };
    let sinks = t.demands.as_ref().map(|d| d.sink_totals(t.nodes.len()));
    let max_sink = sinks
        .as_ref()
        .map_or(0.0, |s| s.iter().copied().fold(0.0, f64::max));
    let radius = |i: usize| match &sinks {
        Some(s) if max_sink > 0.0 => 2.5 + 7.5 * (s[i] / max_sink).sqrt(),
        _ => 3.5,
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{MAP_W}" height="{MAP_H}" viewBox="0 0 {MAP_W} {MAP_H}" font-family="DejaVu Sans, sans-serif">"##
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let st = t.stats();
    let _ = writeln!(
        s,
        r##"<text x="{MARGIN}" y="28" font-size="17">{}: {} nodes, {} links</text>"##,
        esc(&t.name),
        st.nodes,
        st.links
    );
    for l in &t.links {
        let ((ax, ay), (bx, by)) = (at(l.a), at(l.b));
        let colour = if l.capacity.is_some() {
            "#3b6ea5"
        } else {
            "#7f7f7f"
        };
        let _ = writeln!(
            s,
            r##"<line x1="{ax:.1}" y1="{ay:.1}" x2="{bx:.1}" y2="{by:.1}" stroke="{colour}" stroke-width="{:.2}" stroke-linecap="round" opacity="0.85"/>"##,
            width(l.capacity)
        );
    }
    for i in 0..t.nodes.len() {
        let (x, y) = at(i);
        let _ = writeln!(
            s,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="{:.1}" fill="#d95f02" stroke="#ffffff" stroke-width="0.8"/>"##,
            radius(i)
        );
    }
    if t.nodes.len() <= 60 {
        for (i, n) in t.nodes.iter().enumerate() {
            let (x, y) = at(i);
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" font-size="9" fill="#333333">{}</text>"##,
                x + radius(i) + 1.5,
                y - 2.0,
                esc(&n.name)
            );
        }
    }
    // Legend.
    let lx = MAP_W - LEGEND + 10.0;
    let mut ly = 70.0;
    let line = |s: &mut String, ly: &mut f64, text: &str| {
        let _ = writeln!(
            s,
            r##"<text x="{lx}" y="{ly}" font-size="11" fill="#333333">{}</text>"##,
            esc(text)
        );
        *ly += 16.0;
    };
    if max_cap > 0.0 {
        line(&mut s, &mut ly, "link width: capacity");
        for f in [1.0, 0.25] {
            let _ = writeln!(
                s,
                r##"<line x1="{lx}" y1="{}" x2="{}" y2="{}" stroke="#3b6ea5" stroke-width="{:.2}"/>"##,
                ly - 4.0,
                lx + 30.0,
                ly - 4.0,
                width(Some(f * max_cap))
            );
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{ly}" font-size="11" fill="#333333">{}</text>"##,
                lx + 36.0,
                esc(&human(f * max_cap))
            );
            ly += 16.0;
        }
        if st.links_with_capacity < st.links {
            line(&mut s, &mut ly, "grey: capacity unknown");
        }
    } else {
        line(&mut s, &mut ly, "no link capacities in the file");
    }
    ly += 8.0;
    if sinks.is_some() {
        line(&mut s, &mut ly, "node size: demand ending there");
        line(
            &mut s,
            &mut ly,
            &format!("total demand {}", human(st.demand_total)),
        );
    }
    line(
        &mut s,
        &mut ly,
        &format!(
            "diameter {} hops, {} {}",
            st.diameter_hops,
            human(st.diameter_length),
            if geo { "km" } else { "units" }
        ),
    );
    line(
        &mut s,
        &mut ly,
        &format!("mean degree {:.2}", st.mean_degree),
    );
    if st.components > 1 {
        line(&mut s, &mut ly, &format!("{} components", st.components));
    }
    s.push_str("</svg>\n");
    s
}

/// A number with a thousands suffix (1.2k, 3.4M, 10G).
fn human(x: f64) -> String {
    for (d, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if x.abs() >= d {
            return format!("{:.3}", x / d)
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
                + suffix;
        }
    }
    format!("{:.3}", x)
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_string()
}

/// Writes the map of `t` as `path` (.svg or .png, by its extension), atomically.
pub fn write_map(t: &Topology, path: &Path) -> Result<()> {
    let svg = map_svg(t);
    let bytes = match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => svg.into_bytes(),
        Some("png") => crate::plot::png(&svg, 2.0).map_err(|e| Error::file(path, e))?,
        _ => {
            return Err(Error::Usage(format!(
                "{}: a map is written as .svg or .png",
                path.display()
            )));
        }
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::files::ensure_dir(dir)?;
    }
    write_atomic(path, &bytes)
}

/// Every topology file under `dir` (recursively, sorted), by extension.
pub fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| Error::io(&d, e))? {
            let p = e.map_err(|e| Error::io(&d, e))?.path();
            if p.is_dir() {
                stack.push(p);
            } else if Format::from_extension(&p.to_string_lossy()).is_some() {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}
