//! Real media on the live CDN: an adaptive-bitrate asset read from a directory (built by
//! `media/make-asset.sh`: VP9 renditions in CMAF segments, an HLS multivariant playlist
//! `master.m3u8` and a DASH MPD `manifest.mpd` over the same segments), the manifests rewritten
//! for one session with one pathway per edge and the content-steering tags, and the names,
//! types and limits shared by the origin, the edges and the steering server.
//!
//! A session's files live under `/p/{population}/{session}/` on every edge, so relative URIs in
//! media playlists and MPD templates resolve to the same edge and carry the session along; the
//! edge caches by file name, shared by every session.

use crate::serve::http::Validators;
use bytes::Bytes;
use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

/// The multivariant playlist's file name in the asset directory.
pub const HLS_MANIFEST: &str = "master.m3u8";
/// The MPD's file name in the asset directory.
pub const DASH_MANIFEST: &str = "manifest.mpd";
/// Largest asset directory read (it is held in memory).
pub const MAX_ASSET_BYTES: u64 = 512 << 20;

/// The players' scripts served with the pages: (name served, path under the player directory).
pub const PLAYER_SCRIPTS: [(&str, &str); 3] = [
    ("hls.min.js", "node_modules/hls.js/dist/hls.min.js"),
    (
        "dash.all.min.js",
        "node_modules/dashjs/dist/modern/umd/dash.all.min.js",
    ),
    (
        "shaka-player.compiled.js",
        "node_modules/shaka-player/dist/shaka-player.compiled.js",
    ),
];

/// A file name an asset may hold and a request may name: 1 to 128 of letters, digits, `.`, `-`
/// and `_`, not starting with a dot (no paths, so nothing outside the directory is reachable).
pub fn valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}

/// The `Content-Type` of a file, by its extension.
pub fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, e)| e) {
        Some("m3u8") => "application/vnd.apple.mpegurl",
        Some("mpd") => "application/dash+xml",
        Some("m4s" | "mp4") => "video/mp4",
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("json") => "application/json",
        Some("css") => "text/css",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// `t` as one of the static types [`content_type`] gives (the octet-stream type if it is none
/// of them).
pub fn known_content_type(t: &str) -> &'static str {
    const KNOWN: [&str; 9] = [
        "application/vnd.apple.mpegurl",
        "application/dash+xml",
        "video/mp4",
        "text/html; charset=utf-8",
        "text/javascript",
        "application/json",
        "text/css",
        "image/png",
        "application/octet-stream",
    ];
    KNOWN
        .into_iter()
        .find(|k| k.eq_ignore_ascii_case(t))
        .unwrap_or("application/octet-stream")
}

/// One file of a directory served as is.
#[derive(Debug, Clone)]
pub struct File {
    pub bytes: Bytes,
    pub validators: Validators,
    pub content_type: &'static str,
}

impl File {
    /// File `name` holding `bytes`: its type from the name, a content-addressed `ETag` (the
    /// same bytes give the same tag on every server and run) and `Last-Modified`.
    fn new(name: &str, bytes: Bytes, modified: Option<SystemTime>) -> Self {
        let tag = xxhash_rust::xxh64::xxh64(&bytes, 0);
        File {
            validators: Validators {
                etag: Some(format!("\"{tag:016x}-{:x}\"", bytes.len())),
                last_modified: modified.map(Validators::seconds),
            },
            content_type: content_type(name),
            bytes,
        }
    }
}

/// The files of a directory, read once (names checked with [`valid_name`]; subdirectories and
/// other names are skipped).
#[derive(Debug, Clone, Default)]
pub struct Files {
    files: HashMap<String, File>,
}

impl Files {
    /// Reads every regular file of `dir` whose name is valid, at most [`MAX_ASSET_BYTES`] in
    /// all.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let err = |e: std::io::Error| format!("{}: {e}", dir.display());
        let mut files = HashMap::new();
        let mut total = 0u64;
        for entry in std::fs::read_dir(dir).map_err(err)? {
            let entry = entry.map_err(err)?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let meta = entry.metadata().map_err(err)?;
            if !meta.is_file() || !valid_name(&name) {
                continue;
            }
            total += meta.len();
            if total > MAX_ASSET_BYTES {
                return Err(format!(
                    "{}: over {} MiB of files (the directory is held in memory)",
                    dir.display(),
                    MAX_ASSET_BYTES >> 20
                ));
            }
            let bytes = Bytes::from(std::fs::read(entry.path()).map_err(err)?);
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            files.insert(name.clone(), File::new(&name, bytes, Some(modified)));
        }
        Ok(Files { files })
    }

    /// The player directory (`player/` of the repository): its pages, and the pinned players'
    /// scripts from its `node_modules` (installed by `npm ci --prefix player`) as
    /// `hls.min.js`, `dash.all.min.js` and `shaka-player.compiled.js`.
    pub fn player(dir: &Path) -> Result<Self, String> {
        let mut files = Files::load(dir)?;
        for (name, rel) in PLAYER_SCRIPTS {
            let path = dir.join(rel);
            let bytes = std::fs::read(&path).map_err(|e| {
                format!(
                    "{}: {e} (install the players with: npm ci --prefix {})",
                    path.display(),
                    dir.display()
                )
            })?;
            files
                .files
                .insert(name.to_string(), File::new(name, Bytes::from(bytes), None));
        }
        Ok(files)
    }

    /// The file named `name`.
    pub fn get(&self, name: &str) -> Option<&File> {
        self.files.get(name)
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there is no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// A file's text.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name)
            .and_then(|f| std::str::from_utf8(&f.bytes).ok())
    }
}

/// An adaptive-bitrate asset: its files, with both manifests present and understood.
#[derive(Debug, Clone)]
pub struct Asset {
    pub files: Files,
    /// The lowest and the highest rendition's bandwidth, bits per second.
    pub min_bandwidth: u64,
    pub max_bandwidth: u64,
    /// The renditions' `STABLE-VARIANT-ID`s, in playlist order.
    pub variants: Vec<String>,
}

impl Asset {
    /// Reads an asset directory; the error says what is missing and how to build one.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let files = Files::load(dir)?;
        let hls = files.text(HLS_MANIFEST).ok_or_else(|| {
            format!(
                "{}: no {HLS_MANIFEST} (build the test asset with media/make-asset.sh {})",
                dir.display(),
                dir.display()
            )
        })?;
        files
            .text(DASH_MANIFEST)
            .ok_or_else(|| format!("{}: no {DASH_MANIFEST}", dir.display()))?;
        let variants =
            parse_variants(hls).map_err(|e| format!("{}/{HLS_MANIFEST}: {e}", dir.display()))?;
        let min_bandwidth = variants.iter().map(|v| v.bandwidth).min().unwrap_or(0);
        let max_bandwidth = variants.iter().map(|v| v.bandwidth).max().unwrap_or(0);
        Ok(Asset {
            variants: variants.iter().map(|v| v.stable_id.clone()).collect(),
            min_bandwidth,
            max_bandwidth,
            files,
        })
    }

    /// The multivariant playlist for one session (see [`hls_multivariant`]).
    pub fn hls(&self, pathways: &[Pathway], steering: &str) -> String {
        let text = self.files.text(HLS_MANIFEST).expect("checked at load");
        hls_multivariant(text, pathways, steering).expect("checked at load")
    }

    /// The MPD for one session (see [`dash_mpd`]).
    pub fn dash(&self, pathways: &[Pathway], steering: &str) -> String {
        let text = self.files.text(DASH_MANIFEST).expect("checked at load");
        dash_mpd(text, pathways, steering)
    }
}

/// A pathway of one session: an edge's name, and the URL under which it serves the session's
/// files (ending in `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pathway {
    pub id: String,
    pub base: String,
}

/// A variant of a multivariant playlist.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Variant {
    /// The `EXT-X-STREAM-INF` attributes, as written.
    attributes: String,
    uri: String,
    bandwidth: u64,
    stable_id: String,
}

/// The variants of a multivariant playlist, each given a `STABLE-VARIANT-ID` (`v0`, `v1`, ...)
/// unless it has one. Alternative renditions (`#EXT-X-MEDIA`) are refused: a pathway would need
/// its own copies of their groups.
fn parse_variants(text: &str) -> Result<Vec<Variant>, String> {
    if !text.starts_with("#EXTM3U") {
        return Err("not an HLS playlist (no #EXTM3U)".into());
    }
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(a) = line.strip_prefix("#EXT-X-STREAM-INF:") {
            pending = Some(a.to_string());
        } else if line.starts_with("#EXT-X-MEDIA:") {
            return Err("alternative renditions (#EXT-X-MEDIA) are not supported".into());
        } else if line.starts_with("#EXT-X-CONTENT-STEERING") || line.contains("PATHWAY-ID") {
            return Err("already has content steering; give the packager's playlist".into());
        } else if !line.starts_with('#') {
            let Some(attributes) = pending.take() else {
                return Err(format!("URI {line:?} without #EXT-X-STREAM-INF"));
            };
            let bandwidth = attribute(&attributes, "BANDWIDTH")
                .and_then(|b| b.parse().ok())
                .ok_or_else(|| format!("variant {line:?}: no BANDWIDTH"))?;
            let stable_id = attribute(&attributes, "STABLE-VARIANT-ID")
                .map(|s| s.trim_matches('"').to_string())
                .unwrap_or_else(|| format!("v{}", out.len()));
            out.push(Variant {
                attributes,
                uri: line.to_string(),
                bandwidth,
                stable_id,
            });
        }
    }
    if out.is_empty() {
        return Err("no variant (#EXT-X-STREAM-INF)".into());
    }
    Ok(out)
}

/// The value of attribute `name` in an attribute list (quoted values keep their quotes).
pub fn attribute<'a>(list: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = list;
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let (value, next) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"')? + 2;
            (&after[..end], after[end..].trim_start_matches(','))
        } else {
            match after.split_once(',') {
                Some((v, n)) => (v, n),
                None => (after, ""),
            }
        };
        if key.trim() == name {
            return Some(value);
        }
        rest = next;
    }
    None
}

/// The multivariant playlist of one session: every variant of the packager's playlist once per
/// pathway, with the pathway's `PATHWAY-ID`, a `STABLE-VARIANT-ID` (what `PATHWAY-CLONES`'
/// per-variant URIs are keyed by) and an absolute URI under the pathway's base; and the
/// `#EXT-X-CONTENT-STEERING` tag naming the steering server and the first pathway.
pub fn hls_multivariant(
    template: &str,
    pathways: &[Pathway],
    steering: &str,
) -> Result<String, String> {
    let variants = parse_variants(template)?;
    let mut out = String::from("#EXTM3U\n");
    // Content steering needs no particular version; keep the packager's.
    if let Some(v) = template.lines().find(|l| l.starts_with("#EXT-X-VERSION:")) {
        out.push_str(v.trim());
        out.push('\n');
    }
    for line in template.lines().map(str::trim) {
        if line == "#EXT-X-INDEPENDENT-SEGMENTS" || line.starts_with("#EXT-X-START:") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(&format!(
        "#EXT-X-CONTENT-STEERING:SERVER-URI=\"{steering}\""
    ));
    if let Some(first) = pathways.first() {
        out.push_str(&format!(",PATHWAY-ID=\"{}\"", first.id));
    }
    out.push('\n');
    for p in pathways {
        for v in &variants {
            let mut attrs = v.attributes.clone();
            if attribute(&attrs, "STABLE-VARIANT-ID").is_none() {
                attrs.push_str(&format!(",STABLE-VARIANT-ID=\"{}\"", v.stable_id));
            }
            out.push_str(&format!(
                "#EXT-X-STREAM-INF:{attrs},PATHWAY-ID=\"{}\"\n{}{}\n",
                p.id, p.base, v.uri
            ));
        }
    }
    Ok(out)
}

/// The variant URIs of `template` under `base`, by `STABLE-VARIANT-ID`: a pathway clone's
/// `PER-VARIANT-URIS` (hls.js replaces only the host name, not the port, so on loopback a clone
/// is told every URI).
pub fn per_variant_uris(template: &str, base: &str) -> Vec<(String, String)> {
    parse_variants(template)
        .map(|vs| {
            vs.into_iter()
                .map(|v| (v.stable_id, format!("{base}{}", v.uri)))
                .collect()
        })
        .unwrap_or_default()
}

/// The MPD of one session: a `<ContentSteering>` element naming the steering server (queried
/// before playback starts) and one `<BaseURL serviceLocation=...>` per pathway, inserted at the
/// top of the MPD (the packager's relative segment templates resolve against them).
pub fn dash_mpd(template: &str, pathways: &[Pathway], steering: &str) -> String {
    let mut tags = String::new();
    let default = pathways.first().map_or("", |p| p.id.as_str());
    tags.push_str(&format!(
        "\n\t<ContentSteering defaultServiceLocation=\"{default}\" queryBeforeStart=\"true\">{}</ContentSteering>",
        xml_escape(steering)
    ));
    for p in pathways {
        tags.push_str(&format!(
            "\n\t<BaseURL serviceLocation=\"{}\">{}</BaseURL>",
            p.id,
            xml_escape(&p.base)
        ));
    }
    // After the MPD start tag; the schema puts BaseURL and ContentSteering before Period, and
    // ProgramInformation before both, so they go after it when the packager wrote one.
    let anchor = ["</ProgramInformation>", "<ProgramInformation/>"]
        .iter()
        .find_map(|t| template.find(t).map(|i| i + t.len()))
        .or_else(|| {
            let start = template.find("<MPD")?;
            template[start..].find('>').map(|i| start + i + 1)
        });
    match anchor {
        Some(i) => format!("{}{tags}{}", &template[..i], &template[i..]),
        None => template.to_string(),
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASTER: &str = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-STREAM-INF:BANDWIDTH=101552,RESOLUTION=256x144,CODECS=\"vp09.00.11.08\"\nmedia_0.m3u8\n\n#EXT-X-STREAM-INF:BANDWIDTH=251552,RESOLUTION=384x216,CODECS=\"vp09.00.20.08\"\nmedia_1.m3u8\n";

    fn paths() -> Vec<Pathway> {
        vec![
            Pathway {
                id: "east".into(),
                base: "http://127.0.0.1:1/p/pa/s1/".into(),
            },
            Pathway {
                id: "west".into(),
                base: "http://127.0.0.1:2/p/pa/s1/".into(),
            },
        ]
    }

    #[test]
    fn names_and_types() {
        for ok in ["seg-0-001.m4s", "master.m3u8", "a_b.mpd"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", ".hidden", "../x", "a/b", "a b", &"x".repeat(129)] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert_eq!(content_type("x.m3u8"), "application/vnd.apple.mpegurl");
        assert_eq!(content_type("x.mpd"), "application/dash+xml");
        assert_eq!(content_type("x.m4s"), "video/mp4");
        assert_eq!(content_type("x"), "application/octet-stream");
        for name in [
            "a.m3u8", "a.mpd", "a.m4s", "a.html", "a.js", "a.json", "a.css", "a.png",
        ] {
            assert_eq!(known_content_type(content_type(name)), content_type(name));
        }
        assert_eq!(known_content_type("text/evil"), "application/octet-stream");
    }

    #[test]
    fn attribute_lists() {
        let a = "BANDWIDTH=1,CODECS=\"a,b\",RESOLUTION=2x3";
        assert_eq!(attribute(a, "BANDWIDTH"), Some("1"));
        assert_eq!(attribute(a, "CODECS"), Some("\"a,b\""));
        assert_eq!(attribute(a, "RESOLUTION"), Some("2x3"));
        assert_eq!(attribute(a, "X"), None);
    }

    /// Every variant once per pathway, in pathway order, with its pathway, a stable id and an
    /// absolute URI; the steering tag names the server and the first pathway.
    #[test]
    fn multivariant_playlist_per_session() {
        let out = hls_multivariant(MASTER, &paths(), "http://s/steering/pa?session=s1").unwrap();
        let want = "#EXTM3U\n#EXT-X-VERSION:7\n\
            #EXT-X-CONTENT-STEERING:SERVER-URI=\"http://s/steering/pa?session=s1\",PATHWAY-ID=\"east\"\n\
            #EXT-X-STREAM-INF:BANDWIDTH=101552,RESOLUTION=256x144,CODECS=\"vp09.00.11.08\",STABLE-VARIANT-ID=\"v0\",PATHWAY-ID=\"east\"\nhttp://127.0.0.1:1/p/pa/s1/media_0.m3u8\n\
            #EXT-X-STREAM-INF:BANDWIDTH=251552,RESOLUTION=384x216,CODECS=\"vp09.00.20.08\",STABLE-VARIANT-ID=\"v1\",PATHWAY-ID=\"east\"\nhttp://127.0.0.1:1/p/pa/s1/media_1.m3u8\n\
            #EXT-X-STREAM-INF:BANDWIDTH=101552,RESOLUTION=256x144,CODECS=\"vp09.00.11.08\",STABLE-VARIANT-ID=\"v0\",PATHWAY-ID=\"west\"\nhttp://127.0.0.1:2/p/pa/s1/media_0.m3u8\n\
            #EXT-X-STREAM-INF:BANDWIDTH=251552,RESOLUTION=384x216,CODECS=\"vp09.00.20.08\",STABLE-VARIANT-ID=\"v1\",PATHWAY-ID=\"west\"\nhttp://127.0.0.1:2/p/pa/s1/media_1.m3u8\n";
        assert_eq!(out, want);
        assert_eq!(
            per_variant_uris(MASTER, "http://127.0.0.1:3/p/pa/s1/"),
            [
                (
                    "v0".to_string(),
                    "http://127.0.0.1:3/p/pa/s1/media_0.m3u8".to_string()
                ),
                (
                    "v1".to_string(),
                    "http://127.0.0.1:3/p/pa/s1/media_1.m3u8".to_string()
                )
            ]
        );
    }

    #[test]
    fn playlists_refused_with_the_reason() {
        for (text, needle) in [
            ("garbage", "#EXTM3U"),
            ("#EXTM3U\nmedia.m3u8\n", "without #EXT-X-STREAM-INF"),
            (
                "#EXTM3U\n#EXT-X-STREAM-INF:RESOLUTION=1x1\nm.m3u8\n",
                "no BANDWIDTH",
            ),
            ("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO\n", "#EXT-X-MEDIA"),
            ("#EXTM3U\n", "no variant"),
        ] {
            let e = hls_multivariant(text, &paths(), "x").unwrap_err();
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn mpd_gets_steering_and_one_base_url_per_pathway() {
        let mpd = "<?xml version=\"1.0\"?>\n<MPD type=\"static\">\n\t<ProgramInformation>\n\t</ProgramInformation>\n\t<Period id=\"0\"></Period>\n</MPD>\n";
        let out = dash_mpd(mpd, &paths(), "http://s/steering/pa/dash?session=s1&a=b");
        let want = "<?xml version=\"1.0\"?>\n<MPD type=\"static\">\n\t<ProgramInformation>\n\t</ProgramInformation>\n\t\
            <ContentSteering defaultServiceLocation=\"east\" queryBeforeStart=\"true\">http://s/steering/pa/dash?session=s1&amp;a=b</ContentSteering>\n\t\
            <BaseURL serviceLocation=\"east\">http://127.0.0.1:1/p/pa/s1/</BaseURL>\n\t\
            <BaseURL serviceLocation=\"west\">http://127.0.0.1:2/p/pa/s1/</BaseURL>\n\t<Period id=\"0\"></Period>\n</MPD>\n";
        assert_eq!(out, want);
        // Without ProgramInformation: right after the MPD start tag.
        let bare = dash_mpd("<MPD a=\"1\"><Period/></MPD>", &paths()[..1], "u");
        assert!(
            bare.starts_with("<MPD a=\"1\">\n\t<ContentSteering"),
            "{bare}"
        );
        assert!(bare.ends_with("</BaseURL><Period/></MPD>"), "{bare}");
    }
}
