//! Matching a URI back into the template's variables (see the rules on
//! [`UriTemplate`](super::UriTemplate)).

use std::collections::{HashMap, HashSet};

use super::{MATCH_BUDGET, Op, Part, VarSpec, VarValue};
use crate::resource::uri::percent_decode;

/// Bytes of candidate text that cost one unit of the matching budget.
const TEXT_PER_UNIT: usize = 32;

/// One matching run: a backtracking search over the template's parts, with
/// memoised failures (when no variable repeats) and a work budget: each
/// candidate split, each part `can_start` looks at and every
/// [`TEXT_PER_UNIT`] bytes of candidate text cost one unit, so the work of a
/// match is bounded whatever the template and URI.
pub(super) struct Matcher<'a> {
    parts: &'a [Part],
    uri: &'a str,
    vars: HashMap<String, VarValue>,
    failed: HashSet<(usize, usize)>,
    memo: bool,
    budget: usize,
    spent: usize,
}

impl<'a> Matcher<'a> {
    /// A run over `parts` for `uri`; `memo` remembers failed (part, position)
    /// pairs, which is only sound when no variable appears twice.
    pub(super) fn new(parts: &'a [Part], uri: &'a str, memo: bool) -> Self {
        Matcher {
            parts,
            uri,
            vars: HashMap::new(),
            failed: HashSet::new(),
            memo,
            budget: MATCH_BUDGET,
            spent: 0,
        }
    }

    /// The variables, when the whole URI matches.
    pub(super) fn run_all(mut self) -> Option<HashMap<String, VarValue>> {
        self.run(0, 0).then_some(self.vars)
    }

    /// Like [`run_all`](Self::run_all), with the units of work it spent.
    #[cfg(test)]
    pub(super) fn run_counted(mut self) -> (Option<HashMap<String, VarValue>>, usize) {
        let found = self.run(0, 0);
        (found.then_some(self.vars), self.spent)
    }

    /// Takes `units` from the budget (a step past it is still counted).
    fn charge(&mut self, units: usize) {
        self.spent += units;
        self.budget = self.budget.saturating_sub(units);
    }

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
    /// condition that prunes most candidate splits. Each part it looks at
    /// costs one unit of the budget.
    fn can_start(&mut self, part: usize, at: usize) -> bool {
        self.charge(1);
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
        self.charge(stop / TEXT_PER_UNIT);
        // Shortest first: each expression takes as little as the rest allows.
        for end in (0..=stop).filter(|e| rest.is_char_boundary(*e)) {
            if self.budget == 0 {
                return false;
            }
            self.charge(1);
            if !self.can_start(part + 1, pos + end) {
                continue;
            }
            if self.memo && self.failed.contains(&(part + 1, pos + end)) {
                continue;
            }
            // Reading the candidate text costs in proportion to its length.
            self.charge(end / TEXT_PER_UNIT);
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
pub(super) fn decode_value(op: Op, raw: &str) -> Option<VarValue> {
    if !op.allow_reserved() && raw.contains(',') {
        raw.split(',')
            .map(percent_decode)
            .collect::<Option<Vec<_>>>()
            .map(VarValue::List)
    } else {
        percent_decode(raw).map(VarValue::String)
    }
}

pub(super) fn fits_prefix(spec: &VarSpec, v: &VarValue) -> bool {
    match (spec.prefix, v) {
        (Some(n), VarValue::String(s)) => s.chars().count() <= n,
        _ => true,
    }
}

/// Reads the variables of one expression from its text (`raw`, which may be
/// empty: every variable undefined). Returns (index of spec, value) pairs.
pub(super) fn match_expr(op: Op, specs: &[VarSpec], raw: &str) -> Option<Vec<(usize, VarValue)>> {
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

pub(super) fn match_unnamed(
    op: Op,
    specs: &[VarSpec],
    body: &str,
) -> Option<Vec<(usize, VarValue)>> {
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

pub(super) fn match_named(op: Op, specs: &[VarSpec], body: &str) -> Option<Vec<(usize, VarValue)>> {
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
