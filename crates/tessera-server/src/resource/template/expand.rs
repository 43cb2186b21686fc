//! Expansion: variables into URI text, operator by operator.

use std::collections::HashMap;

use super::{Op, VarSpec, VarValue};
use crate::resource::uri::percent_encode;

pub(super) fn truncate(s: &str, prefix: Option<usize>) -> &str {
    match prefix.and_then(|n| s.char_indices().nth(n)) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

pub(super) fn expand_expr(
    out: &mut String,
    op: Op,
    specs: &[VarSpec],
    vars: &HashMap<String, VarValue>,
) {
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
