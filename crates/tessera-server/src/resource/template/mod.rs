//! RFC 6570 URI templates: parsing, expansion, and matching a URI back into
//! the template's variables.
//!
//! Every operator of levels 1 to 4 is supported: `{var}`, `{+var}`,
//! `{#var}`, `{.var}`, `{/var}`, `{;var}`, `{?var}`, `{&var}`, several
//! variables per expression (`{?a,b}`), the explode modifier (`{/path*}`)
//! and the prefix modifier (`{var:3}`).
//!
//! The parts: `parse` of template text into literal and expression
//! parts, `expand` of variables into a URI, and `matcher` of a URI back into
//! variables.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

mod expand;
mod matcher;
mod parse;
#[cfg(test)]
mod tests;

use expand::expand_expr;
use matcher::Matcher;
use parse::{err, parse_expr};

/// URIs longer than this are never matched (a bound on matching work).
pub const MAX_MATCH_LEN: usize = 8 * 1024;

/// How many units of work (candidate splits, mostly) one match may spend
/// before giving up (no match): a few milliseconds of CPU in a release
/// build. Only contrived templates (many adjacent expressions without literal
/// text between them, or a variable repeated, on long URIs) come near.
const MATCH_BUDGET: usize = 1 << 16;

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
        Matcher::new(&self.parts, uri, !self.repeats).run_all()
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
