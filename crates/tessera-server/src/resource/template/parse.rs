//! Parsing template text: variable names and expressions.

use super::{Op, Part, TemplateError, VarSpec};
use crate::resource::uri::is_triplet;

pub(super) fn err(position: usize, problem: impl Into<String>) -> TemplateError {
    TemplateError {
        position,
        problem: problem.into(),
    }
}

pub(super) fn parse_varname(name: &str, at: usize) -> Result<(), TemplateError> {
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

pub(super) fn parse_expr(body: &str, at: usize) -> Result<Part, TemplateError> {
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
