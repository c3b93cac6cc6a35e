//! The XML walk that the GraphML and SNDlib XML readers share: quick-xml streams the events,
//! this keeps the path of open elements and each element's text, and hands both readers the
//! element's start (with its attributes) and its end (with its text), each with its line.

use super::lines::Lines;
use super::{Problem, TopologyError};
use quick_xml::events::Event;
use std::io::BufRead;

/// Deepest nesting accepted: the formats need five levels; this bounds a corrupt file.
const MAX_DEPTH: usize = 64;
/// Longest text of one element, bytes.
const MAX_TEXT: usize = 1 << 20;

/// What the walk reports.
pub(crate) enum Step<'a> {
    /// An element opened: the path of local names down to it, its attributes (local names,
    /// unescaped values).
    Start(&'a [String], &'a [(String, String)]),
    /// An element closed: its path and its text (trimmed).
    End(&'a [String], &'a str),
}

/// Walks a whole XML document, calling `f` for every element's start and end with the line
/// the reader is on.
pub(crate) fn walk(
    input: impl BufRead,
    mut f: impl FnMut(Step<'_>, u64) -> Result<(), TopologyError>,
) -> Result<(), TopologyError> {
    let mut reader = quick_xml::Reader::from_reader(Lines::new(input));
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let mut attrs: Vec<(String, String)> = Vec::new();
    let mut seen_root = false;
    loop {
        let event = reader.read_event_into(&mut buf);
        let line = reader.get_ref().line();
        let syntax = |what: String| TopologyError::at(line, Problem::Syntax(what));
        let event = event.map_err(|e| syntax(format!("not well-formed XML: {e}")))?;
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            if path.is_empty() && seen_root {
                return Err(syntax("a second root element".into()));
            }
            seen_root = true;
            if path.len() >= MAX_DEPTH {
                return Err(syntax(format!("elements nested deeper than {MAX_DEPTH}")));
            }
            path.push(e.local_name().as_ref().to_string());
            attrs.clear();
            for a in e.attributes() {
                let a = a.map_err(|e| syntax(format!("a bad attribute: {e}")))?;
                let value = a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map_err(|e| syntax(format!("a bad attribute value: {e}")))?;
                attrs.push((a.key.local_name().as_ref().to_string(), value.into_owned()));
            }
            f(Step::Start(&path, &attrs), line)?;
            texts.push(String::new());
            if empty {
                f(Step::End(&path, ""), line)?;
                path.pop();
                texts.pop();
            }
            buf.clear();
            continue;
        }
        match event {
            Event::End(_) => {
                let text = texts.pop().unwrap_or_default();
                f(Step::End(&path, text.trim()), line)?;
                path.pop();
            }
            Event::Text(t) => {
                if let Some(s) = texts.last_mut() {
                    s.push_str(&t.xml10_content());
                } else if !t.xml10_content().trim().is_empty() {
                    return Err(syntax("text outside the root element".into()));
                }
            }
            Event::CData(t) => {
                if let Some(s) = texts.last_mut() {
                    s.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                let ch = match r.resolve_char_ref() {
                    Ok(Some(c)) => c,
                    Ok(None) => match &*r {
                        "amp" => '&',
                        "lt" => '<',
                        "gt" => '>',
                        "quot" => '"',
                        "apos" => '\'',
                        other => return Err(syntax(format!("an unknown entity &{other};"))),
                    },
                    Err(e) => return Err(syntax(format!("a bad character reference: {e}"))),
                };
                if let Some(s) = texts.last_mut() {
                    s.push(ch);
                }
            }
            Event::Eof => {
                if !path.is_empty() {
                    return Err(syntax(format!(
                        "the file ends inside <{}>",
                        path.last().expect("a path")
                    )));
                }
                if !seen_root {
                    return Err(syntax("no XML element in the file".into()));
                }
                return Ok(());
            }
            _ => {}
        }
        if texts.last().is_some_and(|t| t.len() > MAX_TEXT) {
            return Err(syntax(format!(
                "an element's text is over {MAX_TEXT} bytes"
            )));
        }
        buf.clear();
    }
}

/// A number from an element's text or an attribute.
pub(crate) fn number(field: &str, text: &str, line: u64) -> Result<f64, TopologyError> {
    text.trim().parse::<f64>().map_err(|_| {
        TopologyError::at(
            line,
            Problem::Value {
                field: field.into(),
                value: format!("{text:?}"),
                allowed: "a number".into(),
            },
        )
    })
}
