//! RFC 6570 URI templates: parsing, expansion, and matching a URI back into
//! the template's variables.
//!
//! Every operator of levels 1 to 4 is supported: `{var}`, `{+var}`,
//! `{#var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}`, `{&var}`, several
//! variables per expression (`{?a,b}`), the explode modifier (`{/path*}`)
//! and the prefix modifier (`{var:3}`).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use super::uri::{is_triplet, percent_decode, percent_encode};

/// URIs longer than this are never matched (a bound on matching work).
pub const MAX_MATCH_LEN: usize = 8 * 1024;

/// How many candidate splits one match may consider before giving up (no
/// match). Only contrived templates (many adjacent expressions without
/// literal text between them, on long URIs) come near.
const MATCH_BUDGET: usize = 1 << 20;

/// A parsed RFC 6570 URI template.
///
/// # How a URI is matched
///
/// Expansion loses information (an undefined variable and an empty one may
/// expand alike, a list and a string too), so matching picks one reading:
///
/// - Literal text must appear as is. Each expression takes the **shortest**
///   text that lets the rest of the template match (so `{+path}{?q}` leaves
///   the query to `{?q}`).
/// - An expression never spans a character that cannot occur in its
///   expansion's position: `/`, `?` and `#` end `{var}`, `{.var}` and
///   `{;var}`; `?` and `#` end `{/var}`; `#` ends `{?var}` and `{&var}`.
///   `{+var}` and `{#var}` may contain anything. Other characters are
///   accepted even where the RFC would have encoded them, since clients do
///   not always encode.
/// - Values are percent-decoded (and must then be UTF-8). A value of an
///   unreserved expansion (`{var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}`,
///   `{&var}`) that contains a raw `,` is a list ([`VarValue::List`]); so is
///   every exploded variable's value, except a named exploded variable
///   (`{?params*}`) that received pairs with other names, which is a
///   [`VarValue::Map`].
/// - Variables of an unnamed expression with several variables (`{x,y}`,
///   `{/a,b}`) are assigned in order; those left over are undefined. An
///   exploded variable takes the pieces the others do not need.
/// - Variables of a named expression (`{?a,b}`, `{;a,b}`) are found by name,
///   in any order; a name the template does not have makes the match fail,
///   unless an exploded variable of that expression collects it.
/// - An empty expression leaves all its variables undefined (absent from the
///   result); `?a=` and `;a` give `a` the empty string.
/// - A variable that appears twice must match the same value both times.
/// - URIs longer than [`MAX_MATCH_LEN`] never match, nor do URIs that would
///   need an unreasonable amount of backtracking (only contrived templates,
///   with many adjacent expressions, come near that bound).
///
/// # Example
///
/// ```
/// use tessera_server::{UriTemplate, VarValue};
///
/// let t = UriTemplate::parse("repo://{owner}/tree{/path*}{?ref}").unwrap();
/// let vars = t.match_uri("repo://ana/tree/src/main.rs?ref=v1").unwrap();
/// assert_eq!(vars["owner"], VarValue::from("ana"));
/// assert_eq!(vars["path"], VarValue::List(vec!["src".into(), "main.rs".into()]));
/// assert_eq!(vars["ref"], VarValue::from("v1"));
/// assert_eq!(t.expand(&vars), "repo://ana/tree/src/main.rs?ref=v1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
    repeats: bool,
}

/// Why a URI template could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template at byte {position}: {problem}")]
pub struct TemplateError {
    /// The byte offset of the problem in the template.
    pub position: usize,
    /// What is wrong.
    pub problem: String,
}

/// The value of a template variable: RFC 6570's string, list or
/// associative array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarValue {
    /// A string.
    String(String),
    /// A list of strings.
    List(Vec<String>),
    /// Name/value pairs, in order.
    Map(Vec<(String, String)>),
}

impl VarValue {
    /// The string, if this is one (or a list of exactly one item).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            VarValue::String(s) => Some(s),
            VarValue::List(l) if l.len() == 1 => Some(&l[0]),
            _ => None,
        }
    }

    /// A flat string form: a string as is, list items joined by `,`, pairs
    /// as `name,value,name,value` (RFC 6570's unexploded form, decoded).
    pub fn joined(&self) -> String {
        match self {
            VarValue::String(s) => s.clone(),
            VarValue::List(l) => l.join(","),
            VarValue::Map(m) => m
                .iter()
                .flat_map(|(k, v)| [k.as_str(), v.as_str()])
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    fn is_defined(&self) -> bool {
        match self {
            VarValue::String(_) => true,
            VarValue::List(l) => !l.is_empty(),
            VarValue::Map(m) => !m.is_empty(),
        }
    }
}

impl From<&str> for VarValue {
    fn from(s: &str) -> Self {
        VarValue::String(s.to_owned())
    }
}

impl From<String> for VarValue {
    fn from(s: String) -> Self {
        VarValue::String(s)
    }
}

impl From<Vec<String>> for VarValue {
    fn from(l: Vec<String>) -> Self {
        VarValue::List(l)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn from_byte(b: u8) -> Option<Op> {
        Some(match b {
            b'+' => Op::Reserved,
            b'#' => Op::Fragment,
            b'.' => Op::Label,
            b'/' => Op::Path,
            b';' => Op::PathParam,
            b'?' => Op::Query,
            b'&' => Op::QueryCont,
            _ => return None,
        })
    }

    fn first(self) -> &'static str {
        match self {
            Op::Simple | Op::Reserved => "",
            Op::Fragment => "#",
            Op::Label => ".",
            Op::Path => "/",
            Op::PathParam => ";",
            Op::Query => "?",
            Op::QueryCont => "&",
        }
    }

    fn sep(self) -> char {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ',',
            Op::Label => '.',
            Op::Path => '/',
            Op::PathParam => ';',
            Op::Query | Op::QueryCont => '&',
        }
    }

    fn named(self) -> bool {
        matches!(self, Op::PathParam | Op::Query | Op::QueryCont)
    }

    fn ifemp(self) -> &'static str {
        match self {
            Op::Query | Op::QueryCont => "=",
            _ => "",
        }
    }

    fn allow_reserved(self) -> bool {
        matches!(self, Op::Reserved | Op::Fragment)
    }

    /// Characters that end the expression's text when matching.
    fn stops(self) -> &'static [u8] {
        match self {
            Op::Simple | Op::Label | Op::PathParam => b"/?#",
            Op::Path => b"?#",
            Op::Query | Op::QueryCont => b"#",
            Op::Reserved | Op::Fragment => b"",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    explode: bool,
    prefix: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr { op: Op, vars: Vec<VarSpec> },
}

fn err(position: usize, problem: impl Into<String>) -> TemplateError {
    TemplateError {
        position,
        problem: problem.into(),
    }
}

fn parse_varname(name: &str, at: usize) -> Result<(), TemplateError> {
    if name.is_empty() {
        return Err(err(at, "a variable name is empty"));
    }
    let b = name.as_bytes();
    if b[0] == b'.' || b[b.len() - 1] == b'.' || name.contains("..") {
        return Err(err(
            at,
            format!("variable name {name:?} has a misplaced '.'"),
        ));
    }
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if !is_triplet(b, i) {
                return Err(err(
                    at,
                    format!("variable name {name:?} has a bad %-escape"),
                ));
            }
            i += 3;
            continue;
        }
        if !(b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
            return Err(err(
                at,
                format!(
                    "variable name {name:?} may only use letters, digits, '_', '.' and %-escapes"
                ),
            ));
        }
        i += 1;
    }
    Ok(())
}

fn parse_expr(body: &str, at: usize) -> Result<Part, TemplateError> {
    let Some(&c) = body.as_bytes().first() else {
        return Err(err(at, "empty expression {}"));
    };
    let (op, list) = match Op::from_byte(c) {
        Some(op) => (op, &body[1..]),
        None if matches!(c, b'=' | b',' | b'!' | b'@' | b'|') => {
            return Err(err(
                at + 1,
                format!("operator '{}' is reserved by RFC 6570", c as char),
            ));
        }
        None => (Op::Simple, body),
    };
    let mut vars = Vec::new();
    for spec in list.split(',') {
        let (name, explode, prefix) = if let Some(n) = spec.strip_suffix('*') {
            (n, true, None)
        } else if let Some((n, len)) = spec.split_once(':') {
            let ok = !len.is_empty() && len.len() <= 4 && len.bytes().all(|b| b.is_ascii_digit());
            let n_len: usize = if ok { len.parse().unwrap_or(0) } else { 0 };
            if n_len == 0 {
                return Err(err(
                    at,
                    format!("prefix length {len:?} must be a number from 1 to 9999"),
                ));
            }
            (n, false, Some(n_len))
        } else {
            (spec, false, None)
        };
        parse_varname(name, at)?;
        vars.push(VarSpec {
            name: name.to_owned(),
            explode,
            prefix,
        });
    }
    Ok(Part::Expr { op, vars })
}

impl UriTemplate {
    /// Parses a template.
    pub fn parse(template: &str) -> Result<Self, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = template;
        let mut offset = 0;
        while let Some(i) = rest.find(['{', '}']) {
            if rest.as_bytes()[i] == b'}' {
                return Err(err(offset + i, "'}' without a matching '{'"));
            }
            literal.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let Some(end) = after.find(['{', '}']) else {
                return Err(err(offset + i, "'{' is never closed"));
            };
            if after.as_bytes()[end] == b'{' {
                return Err(err(offset + i + 1 + end, "expressions cannot nest"));
            }
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(parse_expr(&after[..end], offset + i + 1)?);
            let consumed = i + 1 + end + 1;
            offset += consumed;
            rest = &rest[consumed..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        let mut seen = HashSet::new();
        let repeats = parts
            .iter()
            .flat_map(|p| match p {
                Part::Expr { vars, .. } => vars.as_slice(),
                Part::Literal(_) => &[],
            })
            .any(|v| !seen.insert(v.name.as_str()));
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
            repeats,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the variables, each once, in order of appearance.
    pub fn variables(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in &self.parts {
            if let Part::Expr { vars, .. } = p {
                for v in vars {
                    if !out.contains(&v.name.as_str()) {
                        out.push(&v.name);
                    }
                }
            }
        }
        out
    }

    /// Whether the template has a variable called `name`.
    pub fn has_variable(&self, name: &str) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Expr { vars, .. } => vars.iter().any(|v| v.name == name),
            Part::Literal(_) => false,
        })
    }

    /// Whether the template has no expressions (it names one URI).
    pub fn is_literal(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// Expands the template with `vars` (RFC 6570 §3); missing variables are
    /// undefined.
    pub fn expand(&self, vars: &HashMap<String, VarValue>) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Literal(l) => out.push_str(l),
                Part::Expr { op, vars: specs } => expand_expr(&mut out, *op, specs, vars),
            }
        }
        out
    }

    /// Matches `uri` against the template; on success, the defined
    /// variables and their percent-decoded values. See [`UriTemplate`] for
    /// how ambiguities are resolved.
    pub fn match_uri(&self, uri: &str) -> Option<HashMap<String, VarValue>> {
        if uri.len() > MAX_MATCH_LEN {
            return None;
        }
        let mut m = Matcher {
            parts: &self.parts,
            uri,
            vars: HashMap::new(),
            failed: HashSet::new(),
            memo: !self.repeats,
            budget: MATCH_BUDGET,
        };
        m.run(0, 0).then_some(m.vars)
    }
}

impl FromStr for UriTemplate {
    type Err = TemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UriTemplate::parse(s)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

fn truncate(s: &str, prefix: Option<usize>) -> &str {
    match prefix.and_then(|n| s.char_indices().nth(n)) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn expand_expr(out: &mut String, op: Op, specs: &[VarSpec], vars: &HashMap<String, VarValue>) {
    let enc = |s: &str| percent_encode(s, op.allow_reserved());
    let mut first = true;
    for spec in specs {
        let Some(value) = vars.get(&spec.name).filter(|v| v.is_defined()) else {
            continue;
        };
        if first {
            out.push_str(op.first());
            first = false;
        } else {
            out.push(op.sep());
        }
        let named = |out: &mut String, name: &str, v: &str| {
            out.push_str(name);
            if v.is_empty() {
                out.push_str(op.ifemp());
            } else {
                out.push('=');
                out.push_str(&enc(v));
            }
        };
        match value {
            VarValue::String(s) => {
                let s = truncate(s, spec.prefix);
                if op.named() {
                    named(out, &spec.name, s);
                } else {
                    out.push_str(&enc(s));
                }
            }
            VarValue::List(items) if spec.explode => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(op.sep());
                    }
                    if op.named() {
                        named(out, &spec.name, item);
                    } else {
                        out.push_str(&enc(item));
                    }
                }
            }
            VarValue::Map(pairs) if spec.explode => {
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(op.sep());
                    }
                    if op.named() {
                        named(out, &enc(k), v);
                    } else {
                        out.push_str(&enc(k));
                        out.push('=');
                        out.push_str(&enc(v));
                    }
                }
            }
            VarValue::List(_) | VarValue::Map(_) => {
                let items: Vec<String> = match value {
                    VarValue::List(l) => l.iter().map(|x| enc(x)).collect(),
                    VarValue::Map(m) => m.iter().flat_map(|(k, v)| [enc(k), enc(v)]).collect(),
                    VarValue::String(_) => unreachable!("handled above"),
                };
                if op.named() {
                    out.push_str(&spec.name);
                    out.push('=');
                }
                out.push_str(&items.join(","));
            }
        }
    }
}

struct Matcher<'a> {
    parts: &'a [Part],
    uri: &'a str,
    vars: HashMap<String, VarValue>,
    failed: HashSet<(usize, usize)>,
    memo: bool,
    budget: usize,
}

impl Matcher<'_> {
    fn run(&mut self, part: usize, pos: usize) -> bool {
        if self.budget == 0 {
            return false;
        }
        let Some(p) = self.parts.get(part) else {
            return pos == self.uri.len();
        };
        if self.memo && self.failed.contains(&(part, pos)) {
            return false;
        }
        let ok = match p {
            Part::Literal(l) => {
                self.uri[pos..].starts_with(l.as_str()) && self.run(part + 1, pos + l.len())
            }
            Part::Expr { op, vars } => self.expr(part, pos, *op, vars),
        };
        if !ok && self.memo {
            self.failed.insert((part, pos));
        }
        ok
    }

    /// Whether part `part` can begin at byte `at`: a cheap necessary
    /// condition that prunes most candidate splits.
    fn can_start(&self, part: usize, at: usize) -> bool {
        let rest = &self.uri[at..];
        match self.parts.get(part) {
            None => rest.is_empty(),
            Some(Part::Literal(l)) => rest.starts_with(l.as_str()),
            Some(Part::Expr { op, .. }) => {
                op.first().is_empty()
                    || rest.starts_with(op.first())
                    || self.can_start(part + 1, at)
            }
        }
    }

    fn expr(&mut self, part: usize, pos: usize, op: Op, specs: &[VarSpec]) -> bool {
        let rest = &self.uri[pos..];
        let stop = rest
            .bytes()
            .position(|b| op.stops().contains(&b))
            .unwrap_or(rest.len());
        // Shortest first: each expression takes as little as the rest allows.
        for end in (0..=stop).filter(|e| rest.is_char_boundary(*e)) {
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            if !self.can_start(part + 1, pos + end) {
                continue;
            }
            if self.memo && self.failed.contains(&(part + 1, pos + end)) {
                continue;
            }
            let Some(found) = match_expr(op, specs, &rest[..end]) else {
                continue;
            };
            let mut added = Vec::new();
            let mut consistent = true;
            for (i, value) in found {
                let name = &specs[i].name;
                match self.vars.get(name) {
                    Some(v) if *v != value => consistent = false,
                    Some(_) => {}
                    None => {
                        self.vars.insert(name.clone(), value);
                        added.push(name.clone());
                    }
                }
            }
            if consistent && self.run(part + 1, pos + end) {
                return true;
            }
            for name in added {
                self.vars.remove(&name);
            }
        }
        false
    }
}

/// A decoded piece of an unreserved expansion: a raw `,` makes it a list.
fn decode_value(op: Op, raw: &str) -> Option<VarValue> {
    if !op.allow_reserved() && raw.contains(',') {
        raw.split(',')
            .map(percent_decode)
            .collect::<Option<Vec<_>>>()
            .map(VarValue::List)
    } else {
        percent_decode(raw).map(VarValue::String)
    }
}

fn fits_prefix(spec: &VarSpec, v: &VarValue) -> bool {
    match (spec.prefix, v) {
        (Some(n), VarValue::String(s)) => s.chars().count() <= n,
        _ => true,
    }
}

/// Reads the variables of one expression from its text (`raw`, which may be
/// empty: every variable undefined). Returns (index of spec, value) pairs.
fn match_expr(op: Op, specs: &[VarSpec], raw: &str) -> Option<Vec<(usize, VarValue)>> {
    if raw.is_empty() {
        return Some(Vec::new());
    }
    let body = raw.strip_prefix(op.first())?;
    let found = if op.named() {
        match_named(op, specs, body)?
    } else {
        match_unnamed(op, specs, body)?
    };
    found
        .iter()
        .all(|(i, v)| fits_prefix(&specs[*i], v))
        .then_some(found)
}

fn match_unnamed(op: Op, specs: &[VarSpec], body: &str) -> Option<Vec<(usize, VarValue)>> {
    let sep = op.sep();
    if let [spec] = specs {
        let value = if spec.explode {
            VarValue::List(
                body.split(sep)
                    .map(percent_decode)
                    .collect::<Option<Vec<_>>>()?,
            )
        } else {
            if op == Op::Path && body.contains('/') {
                return None;
            }
            decode_value(op, body)?
        };
        return Some(vec![(0, value)]);
    }
    let mut pieces: Vec<&str> = body.split(sep).collect();
    let explode = specs.iter().position(|s| s.explode);
    if pieces.len() > specs.len() && explode.is_none() {
        if !op.allow_reserved() {
            return None;
        }
        // A reserved expansion may contain the separator: the last variable
        // takes the surplus.
        let keep = specs.len() - 1;
        let start = pieces[..keep].iter().map(|p| p.len() + 1).sum::<usize>();
        pieces.truncate(keep);
        pieces.push(&body[start..]);
    }
    let extra = pieces.len().saturating_sub(specs.len());
    let mut out = Vec::new();
    let mut it = pieces.into_iter();
    for i in 0..specs.len() {
        if Some(i) == explode {
            let items = it
                .by_ref()
                .take(extra + 1)
                .map(percent_decode)
                .collect::<Option<Vec<_>>>()?;
            if !items.is_empty() {
                out.push((i, VarValue::List(items)));
            }
        } else if let Some(piece) = it.next() {
            out.push((i, decode_value(op, piece)?));
        }
    }
    Some(out)
}

fn match_named(op: Op, specs: &[VarSpec], body: &str) -> Option<Vec<(usize, VarValue)>> {
    let explode = specs.iter().position(|s| s.explode);
    let mut single: Vec<Option<VarValue>> = vec![None; specs.len()];
    let mut items: Vec<Vec<String>> = vec![Vec::new(); specs.len()];
    let mut pairs: Vec<(String, String)> = Vec::new();
    for piece in body.split(op.sep()) {
        if piece.is_empty() {
            return None;
        }
        let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
        match specs.iter().position(|s| s.name == name) {
            Some(i) if !specs[i].explode => {
                if single[i].is_some() {
                    return None;
                }
                single[i] = Some(decode_value(op, value)?);
            }
            Some(i) => items[i].push(percent_decode(value)?),
            None => {
                explode?;
                pairs.push((percent_decode(name)?, percent_decode(value)?));
            }
        }
    }
    let mut out = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        if let Some(v) = single[i].take() {
            out.push((i, v));
        } else if Some(i) == explode && !pairs.is_empty() {
            let mut all: Vec<(String, String)> = std::mem::take(&mut items[i])
                .into_iter()
                .map(|v| (spec.name.clone(), v))
                .collect();
            all.append(&mut pairs);
            out.push((i, VarValue::Map(all)));
        } else if !items[i].is_empty() {
            out.push((i, VarValue::List(std::mem::take(&mut items[i]))));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> VarValue {
        VarValue::String(v.to_owned())
    }

    fn l(v: &[&str]) -> VarValue {
        VarValue::List(v.iter().map(|x| (*x).to_owned()).collect())
    }

    fn m(v: &[(&str, &str)]) -> VarValue {
        VarValue::Map(
            v.iter()
                .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                .collect(),
        )
    }

    fn vars(v: &[(&str, VarValue)]) -> HashMap<String, VarValue> {
        v.iter()
            .map(|(k, x)| ((*k).to_owned(), x.clone()))
            .collect()
    }

    #[track_caller]
    fn matches(template: &str, uri: &str, expected: &[(&str, VarValue)]) {
        let t = UriTemplate::parse(template).unwrap();
        assert_eq!(
            t.match_uri(uri),
            Some(vars(expected)),
            "{template} against {uri}"
        );
    }

    #[track_caller]
    fn no_match(template: &str, uri: &str) {
        let t = UriTemplate::parse(template).unwrap();
        assert_eq!(t.match_uri(uri), None, "{template} against {uri}");
    }

    /// The values of the RFC's examples (§3.2.1, some renamed).
    fn rfc_vars() -> HashMap<String, VarValue> {
        vars(&[
            ("var", s("value")),
            ("hello", s("Hello World!")),
            ("path", s("/foo/bar")),
            ("empty", s("")),
            ("x", s("1024")),
            ("y", s("768")),
            ("list", l(&["red", "green", "blue"])),
            ("keys", m(&[("semi", ";"), ("dot", "."), ("comma", ",")])),
        ])
    }

    #[test]
    fn expands_like_the_rfc() {
        let v = rfc_vars();
        let cases = [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{+var}", "value"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("X{#var}", "X#value"),
            ("X{#hello}", "X#Hello%20World!"),
            ("map?{x,y}", "map?1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("{+path,x}/here", "/foo/bar,1024/here"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"),
            ("X{.var}", "X.value"),
            ("X{.x,y}", "X.1024.768"),
            ("{/var}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{&x,y,empty}", "&x=1024&y=768&empty="),
            ("{var:3}", "val"),
            ("{var:30}", "value"),
            ("{list}", "red,green,blue"),
            ("{list*}", "red,green,blue"),
            ("{keys}", "semi,%3B,dot,.,comma,%2C"),
            ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
            ("{+path:6}/here", "/foo/b/here"),
            ("{#keys*}", "#semi=;,dot=.,comma=,"),
            ("X{.list*}", "X.red.green.blue"),
            ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
            ("{;list}", ";list=red,green,blue"),
            ("{;list*}", ";list=red;list=green;list=blue"),
            ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
            ("{?list*}", "?list=red&list=green&list=blue"),
            ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
            ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
            ("{?undef}", ""),
            ("a{/undef}b", "ab"),
        ];
        for (t, want) in cases {
            assert_eq!(UriTemplate::parse(t).unwrap().expand(&v), want, "{t}");
        }
    }

    #[test]
    fn level_1_and_2() {
        matches("{var}", "value", &[("var", s("value"))]);
        matches(
            "{hello}",
            "Hello%20World%21",
            &[("hello", s("Hello World!"))],
        );
        matches(
            "{+hello}",
            "Hello%20World!",
            &[("hello", s("Hello World!"))],
        );
        matches("{+path}/here", "/foo/bar/here", &[("path", s("/foo/bar"))]);
        matches(
            "here?ref={+path}",
            "here?ref=/foo/bar",
            &[("path", s("/foo/bar"))],
        );
        matches("X{#var}", "X#value", &[("var", s("value"))]);
        matches(
            "X{#hello}",
            "X#Hello%20World!",
            &[("hello", s("Hello World!"))],
        );
        matches("X{#var}", "X", &[]);
        no_match("X{#var}", "Xvalue");
    }

    #[test]
    fn level_3() {
        matches(
            "map?{x,y}",
            "map?1024,768",
            &[("x", s("1024")), ("y", s("768"))],
        );
        matches(
            "{x,hello,y}",
            "1024,Hello%20World%21,768",
            &[
                ("x", s("1024")),
                ("hello", s("Hello World!")),
                ("y", s("768")),
            ],
        );
        matches(
            "{+x,hello,y}",
            "1024,Hello%20World!,768",
            &[
                ("x", s("1024")),
                ("hello", s("Hello World!")),
                ("y", s("768")),
            ],
        );
        matches(
            "{+path,x}/here",
            "/foo/bar,1024/here",
            &[("path", s("/foo/bar")), ("x", s("1024"))],
        );
        matches("X{.var}", "X.value", &[("var", s("value"))]);
        matches(
            "X{.x,y}",
            "X.1024.768",
            &[("x", s("1024")), ("y", s("768"))],
        );
        matches("{/var}", "/value", &[("var", s("value"))]);
        matches(
            "{/var,x}/here",
            "/value/1024/here",
            &[("var", s("value")), ("x", s("1024"))],
        );
        matches(
            "{;x,y}",
            ";x=1024;y=768",
            &[("x", s("1024")), ("y", s("768"))],
        );
        matches(
            "{;x,y,empty}",
            ";x=1024;y=768;empty",
            &[("x", s("1024")), ("y", s("768")), ("empty", s(""))],
        );
        matches(
            "{?x,y}",
            "?x=1024&y=768",
            &[("x", s("1024")), ("y", s("768"))],
        );
        matches(
            "{?x,y,empty}",
            "?x=1024&y=768&empty=",
            &[("x", s("1024")), ("y", s("768")), ("empty", s(""))],
        );
        matches("?fixed=yes{&x}", "?fixed=yes&x=1024", &[("x", s("1024"))]);
        matches(
            "{&x,y,empty}",
            "&x=1024&y=768&empty=",
            &[("x", s("1024")), ("y", s("768")), ("empty", s(""))],
        );
    }

    #[test]
    fn level_4() {
        matches("{var:3}", "val", &[("var", s("val"))]);
        no_match("{var:3}", "value");
        matches(
            "{list}",
            "red,green,blue",
            &[("list", l(&["red", "green", "blue"]))],
        );
        matches(
            "{list*}",
            "red,green,blue",
            &[("list", l(&["red", "green", "blue"]))],
        );
        matches(
            "{/list*}",
            "/red/green/blue",
            &[("list", l(&["red", "green", "blue"]))],
        );
        matches(
            "X{.list*}",
            "X.red.green.blue",
            &[("list", l(&["red", "green", "blue"]))],
        );
        matches(
            "{/list*,path:4}",
            "/red/green/blue/%2Ffoo",
            &[("list", l(&["red", "green", "blue"])), ("path", s("/foo"))],
        );
        matches(
            "{;list}",
            ";list=red,green,blue",
            &[("list", l(&["red", "green", "blue"]))],
        );
        matches(
            "{;list*}",
            ";list=red;list=green;list=blue",
            &[("list", l(&["red", "green", "blue"]))],
        );
        matches(
            "{?list*}",
            "?list=red&list=green&list=blue",
            &[("list", l(&["red", "green", "blue"]))],
        );
        matches(
            "{?keys*}",
            "?semi=%3B&dot=.&comma=%2C",
            &[("keys", m(&[("semi", ";"), ("dot", "."), ("comma", ",")]))],
        );
        matches(
            "{&keys*}",
            "&semi=%3B&dot=.&comma=%2C",
            &[("keys", m(&[("semi", ";"), ("dot", "."), ("comma", ",")]))],
        );
        matches(
            "{;keys*}",
            ";semi=%3B;dot=.;comma=%2C",
            &[("keys", m(&[("semi", ";"), ("dot", "."), ("comma", ",")]))],
        );
    }

    #[test]
    fn resource_shaped_templates() {
        matches(
            "file:///{+path}",
            "file:///a/b/c.txt",
            &[("path", s("a/b/c.txt"))],
        );
        matches("file:///{+path}", "file:///", &[]);
        matches(
            "users://{id}/profile",
            "users://42/profile",
            &[("id", s("42"))],
        );
        no_match("users://{id}/profile", "users://42/settings");
        no_match("users://{id}/profile", "users://4/2/profile");
        no_match("users://{id}/profile", "files://42/profile");
        matches(
            "repo://{owner}/{repo}/tree{/path*}{?ref}",
            "repo://ana/tessera/tree/src/lib.rs?ref=main",
            &[
                ("owner", s("ana")),
                ("repo", s("tessera")),
                ("path", l(&["src", "lib.rs"])),
                ("ref", s("main")),
            ],
        );
        matches(
            "repo://{owner}/{repo}/tree{/path*}{?ref}",
            "repo://ana/tessera/tree",
            &[("owner", s("ana")), ("repo", s("tessera"))],
        );
        // Query parameters in any order; unknown ones refuse the match.
        matches(
            "db://{table}{?limit,offset}",
            "db://users?offset=5&limit=10",
            &[
                ("table", s("users")),
                ("limit", s("10")),
                ("offset", s("5")),
            ],
        );
        no_match(
            "db://{table}{?limit,offset}",
            "db://users?limit=1&order=asc",
        );
        no_match("db://{table}{?limit}", "db://users?limit=1&limit=2");
        no_match("db://{table}{?limit}", "db://users?limit=1&");
        // A reserved expansion leaves the query to the query expression.
        matches(
            "docs://{+path}{?v}",
            "docs://a/b?v=2",
            &[("path", s("a/b")), ("v", s("2"))],
        );
        matches(
            "weather://{city}/{date}.json",
            "weather://S%C3%A3o%20Paulo/2025-01-01.json",
            &[("city", s("São Paulo")), ("date", s("2025-01-01"))],
        );
        matches(
            "x://{name}{.ext}",
            "x://report.tar.gz",
            &[("name", s("report")), ("ext", s("tar.gz"))],
        );
        // Malformed escapes never match.
        no_match("x://{id}", "x://a%zz");
        no_match("x://{id}", "x://%FF");
        no_match("x://{/seg}", "x:///a/b");
        // Unencoded characters are accepted.
        matches(
            "x://{user}@{host}",
            "x://me@example.com",
            &[("user", s("me")), ("host", s("example.com"))],
        );
        // Non-ASCII in the URI.
        matches("x://{w}", "x://été", &[("w", s("été"))]);
    }

    #[test]
    fn repeated_variables_must_agree() {
        matches("x://{a}/{a}", "x://1/1", &[("a", s("1"))]);
        no_match("x://{a}/{a}", "x://1/2");
    }

    #[test]
    fn literal_templates() {
        let t = UriTemplate::parse("config://app").unwrap();
        assert!(t.is_literal());
        assert_eq!(t.match_uri("config://app"), Some(HashMap::new()));
        assert_eq!(t.match_uri("config://ap"), None);
        assert_eq!(t.match_uri("config://apps"), None);
    }

    #[test]
    fn variables_are_listed() {
        let t = UriTemplate::parse("a://{x}/{+y}{?x,z*}").unwrap();
        assert_eq!(t.variables(), vec!["x", "y", "z"]);
        assert!(t.has_variable("z"));
        assert!(!t.has_variable("w"));
        assert_eq!(t.to_string(), "a://{x}/{+y}{?x,z*}");
    }

    #[test]
    fn refuses_bad_templates() {
        for bad in [
            "x://{",
            "x://}",
            "x://{}",
            "x://{a{b}}",
            "x://{=a}",
            "x://{!a}",
            "x://{a b}",
            "x://{a:0}",
            "x://{a:10000}",
            "x://{a:}",
            "x://{a:x}",
            "x://{.}",
            "x://{a..b}",
            "x://{a,}",
            "x://{%zz}",
            "x://{a-b}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad:?}");
        }
        let e = UriTemplate::parse("abc{").unwrap_err();
        assert_eq!(e.position, 3);
        for good in [
            "x://{a.b}",
            "x://{a%20b}",
            "x://{_1}",
            "x://{a:9999}",
            "{a*}",
        ] {
            assert!(UriTemplate::parse(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn long_uris_are_not_matched() {
        let t = UriTemplate::parse("x://{+p}").unwrap();
        let long = format!("x://{}", "a".repeat(MAX_MATCH_LEN));
        assert_eq!(t.match_uri(&long), None);
    }

    #[test]
    fn many_expressions_stay_fast() {
        // Backtracking is memoised and bounded: these would take ages otherwise.
        let t = UriTemplate::parse("x://{a}{b}{c}{d}{e}{f}{g}{h}!").unwrap();
        let uri = format!("x://{}", "a".repeat(MAX_MATCH_LEN - 10));
        assert_eq!(t.match_uri(&uri), None);
        let uri = format!("x://{}/!", "a".repeat(MAX_MATCH_LEN - 10));
        assert_eq!(t.match_uri(&uri), None);
        let t = UriTemplate::parse("x://{a}{b}{c}{a}{b}{c}!").unwrap();
        assert_eq!(t.match_uri(&uri), None);
        let uri = format!("x://{}!", "a".repeat(3000));
        assert!(t.match_uri(&uri).is_some());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn value() -> impl Strategy<Value = String> {
            // Any text but '%': a reserved expansion passes %XX through.
            "[^%]{1,12}"
        }

        proptest! {
            #[test]
            fn unreserved_round_trip(a in value(), b in value(), c in value()) {
                let t = UriTemplate::parse("x://{a}/items{/b}{?c,d}").unwrap();
                let v = vars(&[("a", s(&a)), ("b", s(&b)), ("c", s(&c))]);
                let uri = t.expand(&v);
                prop_assert_eq!(t.match_uri(&uri), Some(v), "{}", uri);
            }

            #[test]
            fn reserved_round_trip(p in "[^%?#]{1,20}", q in value()) {
                let t = UriTemplate::parse("x://{+p}{?q}").unwrap();
                let v = vars(&[("p", s(&p)), ("q", s(&q))]);
                let uri = t.expand(&v);
                prop_assert_eq!(t.match_uri(&uri), Some(v), "{}", uri);
            }

            #[test]
            fn exploded_round_trip(items in proptest::collection::vec(value(), 1..5)) {
                let t = UriTemplate::parse("x://r{/items*}{?tag*}").unwrap();
                let v = vars(&[("items", VarValue::List(items.clone())), ("tag", VarValue::List(items))]);
                let uri = t.expand(&v);
                prop_assert_eq!(t.match_uri(&uri), Some(v), "{}", uri);
            }

            #[test]
            fn never_panics(t in "[a-z{}+#./;?&*:,0-9]{0,16}", uri in "[a-z/?#&=.,;%0-9]{0,24}") {
                if let Ok(t) = UriTemplate::parse(&t) {
                    let _ = t.match_uri(&uri);
                }
            }
        }
    }
}
