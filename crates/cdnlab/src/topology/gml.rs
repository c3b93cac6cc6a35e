//! The Internet Topology Zoo's GML (Himsolt's Graph Modelling Language): `key value` pairs,
//! where a value is a number, a "string" or a `[ ... ]` list, and `#` starts a comment.
//!
//! Read: the `graph [ ... ]` list; its `label` (else `name`, else `Network`) names the network;
//! each `node [ ... ]` has an `id`, a `label` (its name) and `Longitude`/`Latitude` in degrees;
//! each `edge [ ... ]` has a `source` and a `target` (node ids) and, when known, the
//! Zoo's `LinkSpeedRaw` (bit/s, or `capacity`), and cdnlab's `length` (km), `delay` (ms) and
//! `loss` (what `topo convert` writes). Other keys and nested lists are skipped. The lexer
//! reads a byte at a time from the `BufRead` and counts lines as it goes.

use super::{Builder, Problem, RawLink, ReadOptions, Topology, TopologyError};
use std::io::{BufRead, Write};

/// Longest token accepted (a string or a number), bytes: far above any real file's, it bounds
/// what a corrupt file can make the reader hold.
const MAX_TOKEN: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Key(String),
    Num(f64),
    Str(String),
    Open,
    Close,
    Eof,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Key(k) => format!("`{k}`"),
            Tok::Num(n) => format!("the number {n}"),
            Tok::Str(s) => format!("the string {:?}", truncate(s)),
            Tok::Open => "`[`".into(),
            Tok::Close => "`]`".into(),
            Tok::Eof => "the end of the file".into(),
        }
    }
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

struct Lexer<R> {
    r: R,
    line: u64,
    /// The line the last token started on.
    start: u64,
}

impl<R: BufRead> Lexer<R> {
    fn peek(&mut self) -> Result<Option<u8>, TopologyError> {
        let line = self.line;
        let buf = self
            .r
            .fill_buf()
            .map_err(|e| TopologyError::at(line, Problem::Io(e.to_string())))?;
        Ok(buf.first().copied())
    }

    fn bump(&mut self) -> Result<Option<u8>, TopologyError> {
        let b = self.peek()?;
        if let Some(b) = b {
            self.r.consume(1);
            if b == b'\n' {
                self.line += 1;
            }
        }
        Ok(b)
    }

    fn syntax(&self, what: String) -> TopologyError {
        TopologyError::at(self.line, Problem::Syntax(what))
    }

    fn next(&mut self) -> Result<Tok, TopologyError> {
        loop {
            match self.peek()? {
                None => return Ok(Tok::Eof),
                Some(b'#') => while !matches!(self.bump()?, None | Some(b'\n')) {},
                Some(b) if b.is_ascii_whitespace() => {
                    self.bump()?;
                }
                Some(_) => break,
            }
        }
        self.start = self.line;
        let first = self.bump()?.expect("peeked a byte");
        match first {
            b'[' => Ok(Tok::Open),
            b']' => Ok(Tok::Close),
            b'"' => {
                let start = self.line;
                let mut bytes = Vec::new();
                loop {
                    match self.bump()? {
                        None => {
                            return Err(TopologyError::at(
                                start,
                                Problem::Syntax(
                                    "a string opened here is not closed (no matching \")".into(),
                                ),
                            ));
                        }
                        Some(b'"') => break,
                        Some(b) => {
                            if bytes.len() >= MAX_TOKEN {
                                return Err(
                                    self.syntax(format!("a string longer than {MAX_TOKEN} bytes"))
                                );
                            }
                            bytes.push(b)
                        }
                    }
                }
                let s = String::from_utf8(bytes)
                    .map_err(|_| self.syntax("a string that is not UTF-8".into()))?;
                Ok(Tok::Str(unescape(&s)))
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let mut key = String::from(b as char);
                while let Some(c) = self.peek()? {
                    if c.is_ascii_alphanumeric() || c == b'_' {
                        key.push(c as char);
                        self.bump()?;
                        if key.len() > MAX_TOKEN {
                            return Err(self.syntax("a key that does not end".into()));
                        }
                    } else {
                        break;
                    }
                }
                Ok(Tok::Key(key))
            }
            b if b.is_ascii_digit() || b == b'-' || b == b'+' || b == b'.' => {
                let mut num = String::from(b as char);
                while let Some(c) = self.peek()? {
                    if c.is_ascii_alphanumeric() || c == b'.' || c == b'-' || c == b'+' {
                        num.push(c as char);
                        self.bump()?;
                        if num.len() > 64 {
                            return Err(self.syntax("a number that does not end".into()));
                        }
                    } else {
                        break;
                    }
                }
                num.parse::<f64>()
                    .map(Tok::Num)
                    .map_err(|_| self.syntax(format!("{num:?} is not a number")))
            }
            b => Err(self.syntax(format!(
                "unexpected {} (a key, a number, a \"string\", [ or ] was expected)",
                if b.is_ascii_graphic() {
                    format!("`{}`", b as char)
                } else {
                    format!("byte 0x{b:02x}")
                }
            ))),
        }
    }

    /// Skips the rest of a list whose `[` was just read.
    fn skip_list(&mut self) -> Result<(), TopologyError> {
        let (start, mut depth) = (self.line, 1usize);
        loop {
            match self.next()? {
                Tok::Open => depth += 1,
                Tok::Close => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Tok::Eof => return Err(unclosed(start)),
                _ => {}
            }
        }
    }

    /// The scalar `key value` pairs of a list whose `[` was just read (nested lists skipped).
    fn block(&mut self) -> Result<Vec<(String, Tok)>, TopologyError> {
        let start = self.line;
        let mut out = Vec::new();
        loop {
            match self.next()? {
                Tok::Close => return Ok(out),
                Tok::Key(k) => match self.next()? {
                    Tok::Open => self.skip_list()?,
                    v @ (Tok::Num(_) | Tok::Str(_)) => out.push((k, v)),
                    other => {
                        return Err(self.syntax(format!(
                            "`{k}` is followed by {} (a value was expected)",
                            other.describe()
                        )));
                    }
                },
                Tok::Eof => return Err(unclosed(start)),
                other => {
                    return Err(
                        self.syntax(format!("{} where a key was expected", other.describe()))
                    );
                }
            }
        }
    }
}

fn unclosed(line: u64) -> TopologyError {
    TopologyError::at(
        line,
        Problem::Syntax("a list opened on this line is not closed (no matching ])".into()),
    )
}

/// The five XML entities and numeric character references, which the Zoo's strings use.
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity.strip_prefix('#').and_then(|n| {
                match n.strip_prefix('x').or_else(|| n.strip_prefix('X')) {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => n.parse().ok(),
                }
                .and_then(char::from_u32)
            }),
        };
        match ch {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A node or edge id: GML's are integers, written without a fraction.
fn id_of(t: &Tok) -> Option<String> {
    match t {
        Tok::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => Some(format!("{}", *n as i64)),
        Tok::Num(n) => Some(n.to_string()),
        Tok::Str(s) => Some(s.clone()),
        _ => None,
    }
}

fn get<'a>(block: &'a [(String, Tok)], key: &str) -> Option<&'a Tok> {
    block.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn number(
    block: &[(String, Tok)],
    keys: &[&str],
    what: &str,
    line: u64,
) -> Result<Option<f64>, TopologyError> {
    for key in keys {
        match get(block, key) {
            Some(Tok::Num(n)) => return Ok(Some(*n)),
            Some(other) => {
                return Err(TopologyError::at(
                    line,
                    Problem::Value {
                        field: format!("{what}: {key}"),
                        value: other.describe(),
                        allowed: "a number".into(),
                    },
                ));
            }
            None => {}
        }
    }
    Ok(None)
}

/// Reads a GML topology.
pub fn read(input: impl BufRead, options: ReadOptions) -> Result<Topology, TopologyError> {
    let mut lx = Lexer {
        r: input,
        line: 1,
        start: 1,
    };
    let mut b = Builder::new();
    let mut found = false;
    loop {
        match lx.next()? {
            Tok::Eof => break,
            Tok::Key(k) => match lx.next()? {
                Tok::Open if k == "graph" && !found => {
                    found = true;
                    graph(&mut lx, &mut b)?;
                }
                Tok::Open if k == "graph" => {
                    return Err(lx.syntax("a second graph: cdnlab reads one graph per file".into()));
                }
                Tok::Open => lx.skip_list()?,
                Tok::Num(_) | Tok::Str(_) => {}
                other => {
                    return Err(lx.syntax(format!(
                        "`{k}` is followed by {} (a value was expected)",
                        other.describe()
                    )));
                }
            },
            other => {
                return Err(lx.syntax(format!("{} where a key was expected", other.describe())));
            }
        }
    }
    if !found {
        return Err(TopologyError::whole(Problem::Syntax(
            "no `graph [ ... ]` in the file: not a GML graph".into(),
        )));
    }
    b.finish(options)
}

fn graph<R: BufRead>(lx: &mut Lexer<R>, b: &mut Builder) -> Result<(), TopologyError> {
    let start = lx.line;
    let mut names: Vec<(u8, String)> = Vec::new();
    loop {
        let tok = lx.next()?;
        let line = lx.start;
        match tok {
            Tok::Close => break,
            Tok::Eof => return Err(unclosed(start)),
            Tok::Key(k) => {
                let v = lx.next()?;
                match (k.as_str(), v) {
                    ("node", Tok::Open) => {
                        let block = lx.block()?;
                        let id = get(&block, "id").and_then(id_of).ok_or_else(|| {
                            TopologyError::at(
                                line,
                                Problem::Syntax("a node without an `id`".into()),
                            )
                        })?;
                        let name = match get(&block, "label") {
                            Some(t) => id_of(t).unwrap_or_default(),
                            None => String::new(),
                        };
                        let what = format!("node {id}");
                        let lon = number(&block, &["Longitude", "longitude"], &what, line)?;
                        let lat = number(&block, &["Latitude", "latitude"], &what, line)?;
                        b.node(&id, &name, lon.zip(lat).map(|(x, y)| [x, y]), line)?;
                    }
                    ("edge", Tok::Open) => {
                        let block = lx.block()?;
                        let end = |key: &str| {
                            get(&block, key).and_then(id_of).ok_or_else(|| {
                                TopologyError::at(
                                    line,
                                    Problem::Syntax(format!("an edge without a `{key}`")),
                                )
                            })
                        };
                        let (a, bb) = (end("source")?, end("target")?);
                        let what = format!("edge {a}-{bb}");
                        let link = RawLink {
                            capacity: number(&block, &["LinkSpeedRaw", "capacity"], &what, line)?,
                            length: number(&block, &["length"], &what, line)?,
                            delay: number(&block, &["delay"], &what, line)?,
                            loss: number(&block, &["loss"], &what, line)?,
                            id: get(&block, "id").and_then(id_of).unwrap_or_default(),
                            a,
                            b: bb,
                        };
                        b.link(link, line)?;
                    }
                    (_, Tok::Open) => lx.skip_list()?,
                    ("coordinates", Tok::Str(s)) if s == "planar" => {
                        b.coordinates(super::Coordinates::Planar);
                    }
                    (k, Tok::Str(s)) => {
                        let rank = match k {
                            "label" => 0,
                            "name" => 1,
                            "Network" => 2,
                            _ => continue,
                        };
                        names.push((rank, s));
                    }
                    (_, Tok::Num(_)) => {}
                    (k, other) => {
                        return Err(lx.syntax(format!(
                            "`{k}` is followed by {} (a value was expected)",
                            other.describe()
                        )));
                    }
                }
            }
            other => {
                return Err(lx.syntax(format!("{} where a key was expected", other.describe())));
            }
        }
    }
    names.sort_by_key(|n| n.0);
    if let Some((_, n)) = names.first() {
        b.name(n);
    }
    Ok(())
}

/// Escapes a string for GML (the Zoo's convention: XML entities for `&` and `"`).
fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;")
}

/// Writes a topology as Topology Zoo GML (positions as `Longitude`/`Latitude`, capacity as
/// `LinkSpeedRaw`, and cdnlab's `length`, `delay` and `loss`). GML has no place for demands:
/// the caller checks that there are none to lose.
pub fn write(t: &Topology, mut out: impl Write) -> std::io::Result<()> {
    writeln!(out, "graph [")?;
    writeln!(out, "  directed 0")?;
    writeln!(out, "  label \"{}\"", escape(&t.name))?;
    if t.coordinates == super::Coordinates::Planar {
        writeln!(out, "  coordinates \"planar\"")?;
    }
    for (i, n) in t.nodes.iter().enumerate() {
        writeln!(out, "  node [")?;
        writeln!(out, "    id {i}")?;
        writeln!(out, "    label \"{}\"", escape(&n.name))?;
        writeln!(out, "    Longitude {}", n.pos[0])?;
        writeln!(out, "    Latitude {}", n.pos[1])?;
        writeln!(out, "  ]")?;
    }
    for l in &t.links {
        writeln!(out, "  edge [")?;
        writeln!(out, "    source {}", l.a)?;
        writeln!(out, "    target {}", l.b)?;
        if let Some(c) = l.capacity {
            writeln!(out, "    LinkSpeedRaw {c:?}")?;
        }
        writeln!(out, "    length {:?}", l.length)?;
        writeln!(out, "    delay {:?}", l.delay)?;
        if l.loss > 0.0 {
            writeln!(out, "    loss {:?}", l.loss)?;
        }
        writeln!(out, "  ]")?;
    }
    writeln!(out, "]")
}
