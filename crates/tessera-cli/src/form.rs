//! A form-mode elicitation asked on a terminal: one question per property of
//! the `requestedSchema`, in the order the server declared them (strings,
//! numbers, integers, booleans, single and multiple choice), each answer
//! checked against its constraints and asked again when it does not fit.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};

use serde::Deserialize;
use serde_json::Value;
use tessera::types::{ElicitAction, ElicitResult, ElicitValue, JsonObject, property_order};

use crate::peer_text;
use tessera::types::loose;

/// How many times a question is asked before the form is cancelled.
const MAX_TRIES: usize = 5;

/// Asks the form on `out`, reading answers from `input`. End of input
/// cancels the form.
pub fn ask(
    message: &str,
    schema: &JsonObject,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> io::Result<ElicitResult> {
    writeln!(out, "\nThe server asks: {}", peer_text::block(message))?;
    let Some(first) = question(input, out, "Answer it? [y]es, [n]o (decline), [c]ancel: ")? else {
        return Ok(ElicitResult::action(ElicitAction::Cancel));
    };
    match first.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "" => {}
        "n" | "no" | "decline" => return Ok(ElicitResult::action(ElicitAction::Decline)),
        _ => return Ok(ElicitResult::action(ElicitAction::Cancel)),
    }
    let form = FormSchema::deserialize(schema).unwrap_or_default();
    let props = form.properties.unwrap_or_default();
    let required: Vec<&str> = form
        .required
        .iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut content = BTreeMap::new();
    // In the server's order: a sorted JSON object carries it in the
    // schema's `x-property-order` annotation.
    for name in &property_order(schema) {
        let prop: Property = props.get(name).and_then(loose::view).unwrap_or_default();
        let is_required = required.contains(&name.as_str());
        match ask_property(name, &prop, is_required, input, out)? {
            Asked::Value(v) => {
                content.insert(name.clone(), v);
            }
            Asked::Skipped => {}
            Asked::Cancelled => return Ok(ElicitResult::action(ElicitAction::Cancel)),
        }
    }
    Ok(ElicitResult::accept(content))
}

enum Asked {
    Value(ElicitValue),
    Skipped,
    Cancelled,
}

fn question(input: &mut dyn BufRead, out: &mut dyn Write, q: &str) -> io::Result<Option<String>> {
    write!(out, "{q}")?;
    out.flush()?;
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        writeln!(out)?;
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
}

/// The members of a `requestedSchema` the form reads.
#[derive(Debug, Default, Deserialize)]
struct FormSchema {
    #[serde(default, deserialize_with = "tessera::types::loose::lenient")]
    properties: Option<BTreeMap<String, Value>>,
    #[serde(default, deserialize_with = "tessera::types::loose::lenient")]
    required: Option<Vec<Value>>,
}

/// A property of the schema (or the `items` of an array property), read
/// leniently: each member as sent, used where it has the expected type.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Property {
    #[serde(rename = "type", default)]
    kind: Option<Value>,
    #[serde(default)]
    title: Option<Value>,
    #[serde(default)]
    description: Option<Value>,
    #[serde(default, deserialize_with = "tessera::types::loose::present_value")]
    default: Option<Value>,
    #[serde(default)]
    items: Option<Value>,
    #[serde(rename = "enum", default)]
    values: Option<Value>,
    #[serde(default)]
    enum_names: Option<Value>,
    #[serde(default, deserialize_with = "tessera::types::loose::present_value")]
    one_of: Option<Value>,
    #[serde(default)]
    any_of: Option<Value>,
    #[serde(default)]
    minimum: Option<Value>,
    #[serde(default)]
    maximum: Option<Value>,
    #[serde(default)]
    min_items: Option<Value>,
    #[serde(default)]
    max_items: Option<Value>,
    #[serde(default)]
    min_length: Option<Value>,
    #[serde(default)]
    max_length: Option<Value>,
    #[serde(default)]
    format: Option<Value>,
}

/// One titled choice (`oneOf` / `anyOf` entry).
#[derive(Debug, Default, Deserialize)]
struct Titled {
    #[serde(rename = "const", default)]
    value: Option<Value>,
    #[serde(default)]
    title: Option<Value>,
}

/// A member as text, when it is a string.
fn text(v: &Option<Value>) -> Option<&str> {
    v.as_ref().and_then(Value::as_str)
}

/// The choices of an enum property: (value, label).
fn choices(prop: &Property) -> Option<Vec<(String, String)>> {
    let items: Option<Property> = prop.items.as_ref().and_then(loose::view);
    let source = items.as_ref().unwrap_or(prop);
    if let Some(values) = source.values.as_ref().and_then(Value::as_array) {
        let names = source.enum_names.as_ref().and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let v = v.as_str()?.to_owned();
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(|l| format!("{l} ({v})"))
                        .unwrap_or_else(|| v.clone());
                    Some((v, label))
                })
                .collect(),
        );
    }
    let titled = source
        .one_of
        .as_ref()
        .or(source.any_of.as_ref())
        .and_then(Value::as_array)?;
    Some(
        titled
            .iter()
            .filter_map(|o| {
                let o: Titled = loose::view(o)?;
                let v = text(&o.value)?.to_owned();
                let label = text(&o.title)
                    .map(|t| format!("{t} ({v})"))
                    .unwrap_or_else(|| v.clone());
                Some((v, label))
            })
            .collect(),
    )
}

fn ask_property(
    name: &str,
    prop: &Property,
    required: bool,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> io::Result<Asked> {
    let kind = text(&prop.kind).unwrap_or("string");
    let title = text(&prop.title).unwrap_or(name);
    let default = prop.default.as_ref();
    let options = choices(prop);
    let multi = kind == "array";
    let mut head = format!("{title} ({kind}");
    if required {
        head.push_str(", required");
    }
    if let Some(d) = default {
        head.push_str(&format!(", default {d}"));
    }
    head.push(')');
    if let Some(d) = text(&prop.description) {
        head.push_str(&format!(" — {d}"));
    }
    writeln!(out, "{}", peer_text::line(&head))?;
    if let Some(opts) = &options {
        for (i, (_, label)) in opts.iter().enumerate() {
            writeln!(out, "  {}) {}", i + 1, peer_text::line(label))?;
        }
    }
    let hint = match (kind, multi) {
        (_, true) => "numbers or values, comma separated",
        ("boolean", _) => "y/n",
        _ if options.is_some() => "a number or a value",
        _ => "",
    };
    for _ in 0..MAX_TRIES {
        let prompt = if hint.is_empty() {
            "> ".to_owned()
        } else {
            format!("[{hint}] > ")
        };
        let Some(answer) = question(input, out, &prompt)? else {
            return Ok(Asked::Cancelled);
        };
        let answer = answer.trim();
        if answer.is_empty() {
            if default.is_some() {
                // The client fills in the schema's default.
                return Ok(Asked::Skipped);
            }
            if !required {
                return Ok(Asked::Skipped);
            }
            writeln!(out, "  an answer is required")?;
            continue;
        }
        match parse(kind, prop, options.as_deref(), answer) {
            Ok(v) => return Ok(Asked::Value(v)),
            Err(why) => writeln!(out, "  {}", peer_text::line(&why))?,
        }
    }
    writeln!(out, "  too many invalid answers; the form is cancelled")?;
    Ok(Asked::Cancelled)
}

fn pick(options: &[(String, String)], word: &str) -> Result<String, String> {
    if let Ok(n) = word.parse::<usize>() {
        if (1..=options.len()).contains(&n) {
            return Ok(options[n - 1].0.clone());
        }
    }
    options
        .iter()
        .find(|(v, _)| v == word)
        .map(|(v, _)| v.clone())
        .ok_or_else(|| format!("{word:?} is not one of the choices"))
}

/// Checks one answer against the property's type and constraints.
fn parse(
    kind: &str,
    prop: &Property,
    options: Option<&[(String, String)]>,
    answer: &str,
) -> Result<ElicitValue, String> {
    let num = |v: &Option<Value>| v.as_ref().and_then(Value::as_f64);
    let int = |v: &Option<Value>| v.as_ref().and_then(Value::as_u64).map(|v| v as usize);
    match kind {
        "array" => {
            let opts = options.unwrap_or(&[]);
            let picked = answer
                .split(',')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(|w| pick(opts, w))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(min) = int(&prop.min_items).filter(|m| picked.len() < *m) {
                return Err(format!("choose at least {min}"));
            }
            if let Some(max) = int(&prop.max_items).filter(|m| picked.len() > *m) {
                return Err(format!("choose at most {max}"));
            }
            Ok(ElicitValue::StringList(picked))
        }
        "boolean" => match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Ok(ElicitValue::Boolean(true)),
            "n" | "no" | "false" | "0" => Ok(ElicitValue::Boolean(false)),
            _ => Err("answer y or n".into()),
        },
        "integer" | "number" => {
            let v: f64 = answer
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| format!("{answer:?} is not a number"))?;
            if kind == "integer" && v.fract() != 0.0 {
                return Err(format!("{answer:?} is not a whole number"));
            }
            if let Some(min) = num(&prop.minimum).filter(|m| v < *m) {
                return Err(format!("the smallest allowed is {min}"));
            }
            if let Some(max) = num(&prop.maximum).filter(|m| v > *m) {
                return Err(format!("the largest allowed is {max}"));
            }
            Ok(if kind == "integer" {
                ElicitValue::Integer(v as i64)
            } else {
                ElicitValue::Number(v)
            })
        }
        _ => {
            if let Some(opts) = options {
                return pick(opts, answer).map(ElicitValue::String);
            }
            let chars = answer.chars().count();
            if let Some(min) = int(&prop.min_length).filter(|m| chars < *m) {
                return Err(format!("at least {min} characters"));
            }
            if let Some(max) = int(&prop.max_length).filter(|m| chars > *m) {
                return Err(format!("at most {max} characters"));
            }
            match text(&prop.format) {
                Some("email") if !looks_like_email(answer) => Err("not an email address".into()),
                Some("uri") if url::Url::parse(answer).is_err() => Err("not a URI".into()),
                Some("date") if !looks_like_date(answer) => Err("not a date (YYYY-MM-DD)".into()),
                Some("date-time") if !looks_like_date_time(answer) => {
                    Err("not a date-time (YYYY-MM-DDTHH:MM:SSZ)".into())
                }
                _ => Ok(ElicitValue::String(answer.to_owned())),
            }
        }
    }
}

fn looks_like_email(s: &str) -> bool {
    s.split_once('@').is_some_and(|(user, host)| {
        !user.is_empty() && host.contains('.') && !host.starts_with('.') && !host.ends_with('.')
    }) && !s.contains(char::is_whitespace)
}

fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && (1..=12).contains(&s[5..7].parse::<u8>().unwrap_or(0))
        && (1..=31).contains(&s[8..10].parse::<u8>().unwrap_or(0))
}

fn looks_like_date_time(s: &str) -> bool {
    s.len() >= 20
        && looks_like_date(&s[..10])
        && matches!(s.as_bytes()[10], b'T' | b't')
        && s[11..].starts_with(|c: char| c.is_ascii_digit())
        && (s.ends_with(['Z', 'z']) || s[19..].contains(['+', '-']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(schema: serde_json::Value, answers: &str) -> (ElicitResult, String) {
        let schema = schema.as_object().unwrap().clone();
        let mut input = io::Cursor::new(answers.as_bytes().to_vec());
        let mut out = Vec::new();
        let r = ask("Tell me", &schema, &mut input, &mut out).unwrap();
        (r, String::from_utf8(out).unwrap())
    }

    /// A form made from a `#[derive(JsonSchema)]` struct is asked in the
    /// struct's order, after a trip through sorted JSON objects (the wire).
    #[test]
    fn a_derived_form_is_asked_in_declaration_order() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Booking {
            /// Who books.
            name: String,
            /// How many come.
            guests: u32,
        }
        let schema = tessera::server::schema::elicitation_schema::<Booking>().unwrap();
        let params = tessera::types::ElicitRequestFormParams::new("Book a table", schema);
        let wire = serde_json::to_value(&params).unwrap();
        let raw = wire["requestedSchema"].clone();
        let (r, out) = run(raw, "y\nAda\n4\n");
        assert_eq!(r.action, ElicitAction::Accept);
        let c = r.content.unwrap();
        assert_eq!(c["name"], ElicitValue::String("Ada".into()));
        assert_eq!(c["guests"], ElicitValue::Integer(4));
        let (name, guests) = (out.find("name").unwrap(), out.find("guests").unwrap());
        assert!(name < guests, "name is asked first:\n{out}");
    }

    #[test]
    fn fills_a_form_and_re_asks_bad_answers() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "color": {"type": "string", "enum": ["red", "green"]},
            "email": {"type": "string", "format": "email"},
            "ok": {"type": "boolean"},
            "tags": {"type": "array", "items": {"anyOf": [
                {"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}, "maxItems": 2},
            "zzz": {"type": "string", "default": "dflt"}
        }, "required": ["age", "email"]});
        let (r, out) = run(
            schema,
            "y\n\n200\n41.5\n42\n2\nnope\nme@example.com\nyes\n1,b\n\n",
        );
        assert_eq!(r.action, ElicitAction::Accept);
        let c = r.content.unwrap();
        assert_eq!(c["age"], ElicitValue::Integer(42));
        assert_eq!(c["color"], ElicitValue::String("green".into()));
        assert_eq!(c["email"], ElicitValue::String("me@example.com".into()));
        assert_eq!(c["ok"], ElicitValue::Boolean(true));
        assert_eq!(
            c["tags"],
            ElicitValue::StringList(vec!["a".into(), "b".into()])
        );
        assert!(!c.contains_key("zzz"), "left to the client's default");
        assert!(out.contains("an answer is required"));
        assert!(out.contains("the largest allowed is 150"));
        assert!(out.contains("not a whole number"));
        assert!(out.contains("not an email address"));
        assert!(out.contains("1) A (a)"));
    }

    #[test]
    fn decline_cancel_and_end_of_input() {
        let s = serde_json::json!({"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]});
        assert_eq!(run(s.clone(), "n\n").0.action, ElicitAction::Decline);
        assert_eq!(run(s.clone(), "c\n").0.action, ElicitAction::Cancel);
        assert_eq!(run(s.clone(), "").0.action, ElicitAction::Cancel);
        assert_eq!(run(s.clone(), "y\n").0.action, ElicitAction::Cancel);
        let (r, out) = run(s, "y\n\n\n\n\n\n");
        assert_eq!(r.action, ElicitAction::Cancel);
        assert!(out.contains("too many invalid answers"));
    }

    #[test]
    fn formats() {
        assert!(looks_like_date("2026-12-03"));
        assert!(!looks_like_date("2026-13-03"));
        assert!(looks_like_date_time("2026-12-03T10:00:00Z"));
        assert!(!looks_like_date_time("2026-12-03 10:00"));
        assert!(looks_like_email("a@b.co"));
        assert!(!looks_like_email("a@b"));
    }
}
