//! Results passed on as JSON text: a proxy hands its upstream's answer to
//! its own client without parsing it into a tree and writing it again.
//!
//! A client-role engine asked with
//! [`Engine::send_request_raw`](crate::Engine::send_request_raw) reads a
//! well-formed result response to that request only far enough to check it
//! (JSON-RPC envelope, id, an object result) and hands the result over as
//! text ([`Event::RawResponse`](crate::Event::RawResponse)); anything else
//! goes through the ordinary decoder, with the same errors as ever. A
//! server-role engine answers with such a text
//! ([`Engine::respond_raw`](crate::Engine::respond_raw)) as it is, unless it
//! has something to add (a 2026-07-28 result without `resultType` or the
//! server's identity), in which case it reads it into an object first.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use tessera_types::{JsonObject, RequestId};

mod front;

/// A result object as JSON text (always an object: checked when made).
#[derive(Debug, Clone)]
pub struct RawResult {
    text: Box<RawValue>,
    /// What the text was written with, when it was written by
    /// [`RawResult::shaped`].
    shape: Option<ResultShape>,
}

/// What an engine adds to a 2026-07-28 result (`resultType: "complete"`,
/// and `_meta` with the server's identity when it has one), handed to the
/// request's handler ([`RequestInfo::result_shape`]) so that a typed result
/// is written with them in one pass ([`RawResult::shaped`]).
///
/// [`RequestInfo::result_shape`]: crate::RequestInfo::result_shape
#[derive(Debug, Clone)]
pub struct ResultShape {
    /// The text of `_meta`'s `io.modelcontextprotocol/serverInfo`, if added.
    server_info: Option<Arc<RawValue>>,
}

impl ResultShape {
    /// A shape adding `resultType` and, when given, `_meta` with
    /// `server_info` as the server's identity (an engine writes a result
    /// shaped so as it is only when this is what it adds itself).
    pub fn new(server_info: Option<Arc<RawValue>>) -> Self {
        ResultShape { server_info }
    }

    /// Whether the shape adds `_meta` with the server's identity.
    pub fn adds_server_info(&self) -> bool {
        self.server_info.is_some()
    }
}

impl PartialEq for ResultShape {
    fn eq(&self, other: &Self) -> bool {
        match (&self.server_info, &other.server_info) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.get() == b.get(),
            _ => false,
        }
    }
}

impl RawResult {
    /// `raw` as a result, if it is a JSON object.
    pub fn new(raw: Box<RawValue>) -> Option<Self> {
        raw.get().starts_with('{').then_some(RawResult {
            text: raw,
            shape: None,
        })
    }

    /// `result` written as a 2026-07-28 result in one pass, with what the
    /// engine adds (`shape`, from the request's
    /// [`RequestInfo::result_shape`](crate::RequestInfo::result_shape))
    /// in front of its members: the engine writes it as it is instead of
    /// reading it again. The two members are written first, then the
    /// result's own into the same object (no buffering, no second pass).
    /// A result with its own `resultType` (a task) keeps it, and only `_meta`
    /// is written in front (as the engine does). `None` if `result` does not
    /// write an object, or writes a `_meta` member of its own while the
    /// shape adds the server's identity: such a result is written with
    /// [`RawResult::new`] (or as a tree), and the engine merges it as ever.
    pub fn shaped<T: Serialize + ?Sized>(result: &T, shape: &ResultShape) -> Option<Self> {
        let mut written = front::InFront {
            result,
            server_info: shape.server_info.as_deref(),
            own_type: false,
            met_type: std::cell::Cell::new(false),
        };
        let text = match serde_json::value::to_raw_value(&written) {
            Ok(text) => text,
            // Its own `resultType` (a task): kept, only `_meta` in front.
            Err(_) if written.met_type.get() => {
                written.own_type = true;
                serde_json::value::to_raw_value(&written).ok()?
            }
            Err(_) => return None,
        };
        Some(RawResult {
            text,
            shape: Some(shape.clone()),
        })
    }

    /// Whether the text was written by [`RawResult::shaped`] with `shape`.
    pub(crate) fn is_shaped_as(&self, shape: &ResultShape) -> bool {
        self.shape.as_ref() == Some(shape)
    }

    /// The text of `object`.
    pub fn from_object(object: &JsonObject) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(object).map(|text| RawResult { text, shape: None })
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.text.get()
    }

    /// The result read into an object (fails only past serde_json's nesting
    /// limit: the text is valid JSON).
    pub fn to_object(&self) -> Result<JsonObject, serde_json::Error> {
        serde_json::from_str(self.text.get())
    }

    /// The JSON text as a [`RawValue`], borrowed.
    pub fn as_raw(&self) -> &RawValue {
        &self.text
    }

    /// The JSON text as a [`RawValue`].
    pub fn into_raw(self) -> Box<RawValue> {
        self.text
    }

    /// Reads `bytes` as one well-formed result response (`jsonrpc` exactly
    /// `"2.0"`, a string or integer id, no `method`, an object `result`),
    /// as far as its id and its result's text: what a client engine reads
    /// of the answer to a request sent with
    /// [`Engine::send_request_raw`](crate::Engine::send_request_raw). A
    /// transport that reads an answer anyway hands both to
    /// [`Engine::handle_result`](crate::Engine::handle_result) so that the
    /// engine does not read it again. `None` for anything else.
    pub fn read_response(bytes: &[u8]) -> Option<(RequestId, RawResult)> {
        result_response(bytes)
    }
}

impl PartialEq for RawResult {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for RawResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.text.serialize(s)
    }
}

/// A request's answer: a result object, or a result as JSON text.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A result object (what ordinary handlers build).
    Object(JsonObject),
    /// A result as JSON text, written as it is.
    Raw(RawResult),
}

impl From<JsonObject> for Reply {
    fn from(o: JsonObject) -> Self {
        Reply::Object(o)
    }
}

impl Reply {
    /// The result as an object (a text is read).
    pub fn into_object(self) -> Result<JsonObject, serde_json::Error> {
        match self {
            Reply::Object(o) => Ok(o),
            Reply::Raw(r) => r.to_object(),
        }
    }

    /// The result as JSON text (an object is written).
    pub fn into_raw(self) -> Result<RawResult, serde_json::Error> {
        match self {
            Reply::Object(o) => RawResult::from_object(&o),
            Reply::Raw(r) => Ok(r),
        }
    }
}

/// A result response whose result is JSON text: what an engine writes for
/// [`Engine::respond_raw`](crate::Engine::respond_raw).
#[derive(Debug, Clone, PartialEq)]
pub struct RawResponse {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result.
    pub result: RawResult,
}

impl RawResponse {
    /// Writes the response as JSON text into `out`: the same text as its
    /// [`Serialize`] implementation writes with `serde_json`'s compact
    /// formatter, without going through a serializer (the result is text
    /// already; only the id is serialised).
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut *out, &self.id)?;
        out.extend_from_slice(br#","result":"#);
        out.extend_from_slice(self.result.text.get().as_bytes());
        out.push(b'}');
        Ok(())
    }
}

impl Serialize for RawResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            jsonrpc: &'static str,
            id: &'a RequestId,
            result: &'a RawValue,
        }
        Wire {
            jsonrpc: "2.0",
            id: &self.id,
            result: &self.result.text,
        }
        .serialize(s)
    }
}

/// A member that is present, whatever its value (even `null`).
#[derive(Default)]
struct Seen(bool);

impl<'de> Deserialize<'de> for Seen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d)?;
        Ok(Seen(true))
    }
}

/// The members of a response that decide whether it passes as text.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Seen,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
}

/// Whether the first byte that is not JSON whitespace is `{`.
fn opens_object(text: &[u8]) -> bool {
    text.iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .is_some_and(|b| *b == b'{')
}

/// Reads `bytes` as one well-formed result response: `jsonrpc` exactly
/// `"2.0"`, a string or integer id, no `method`, an object `result`.
/// `None` for anything else (a request, an error, a batch, bad input), which
/// the ordinary decoder then reads with its own errors.
pub(crate) fn result_response(bytes: &[u8]) -> Option<(RequestId, RawResult)> {
    if !opens_object(bytes) {
        return None;
    }
    let e: Envelope<'_> = serde_json::from_slice(bytes).ok()?;
    if e.method.0 || e.jsonrpc?.get() != "\"2.0\"" {
        return None;
    }
    let id = e.id?.get();
    let id = if id.starts_with('"') {
        RequestId::String(serde_json::from_str(id).ok()?)
    } else {
        RequestId::Number(serde_json::from_str(id).ok()?)
    };
    let result = e.result?;
    if !result.get().starts_with('{') {
        return None;
    }
    Some((
        id,
        RawResult {
            text: result.to_owned(),
            shape: None,
        },
    ))
}

/// A member name as it was read: borrowed from the text unless it had
/// escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for KeyVisitor<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor(PhantomData))
    }
}

/// The members of a result object in their order, each value as its text
/// (read in one pass; nothing becomes a tree).
struct Members<'a>(Vec<(Key<'a>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for MembersVisitor<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(key) = map.next_key::<Key<'a>>()? {
                    let value: &'a RawValue = map.next_value()?;
                    members.push((key, value));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(MembersVisitor(PhantomData))
    }
}

#[derive(serde::Deserialize)]
struct MetaShape {
    #[serde(rename = "io.modelcontextprotocol/serverInfo", default)]
    server_info: Seen,
}

/// A shaped result as the serializer writes it: what the engine adds first,
/// then the result's own members, their values as they were.
struct Shaped<'a, I: ?Sized> {
    result_type: bool,
    server_info: Option<&'a I>,
    members: &'a [(Key<'a>, &'a RawValue)],
}

/// `_meta` holding only the server's identity.
struct MetaWithInfo<'a, I: ?Sized>(&'a I);

impl<I: Serialize + ?Sized> Serialize for MetaWithInfo<'_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("io.modelcontextprotocol/serverInfo", self.0)?;
        m.end()
    }
}

impl<I: Serialize + ?Sized> Serialize for Shaped<'_, I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if self.result_type {
            m.serialize_entry("resultType", "complete")?;
        }
        if let Some(info) = self.server_info {
            m.serialize_entry("_meta", &MetaWithInfo(info))?;
        }
        for (key, value) in self.members {
            m.serialize_entry(key.0.as_ref(), value)?;
        }
        m.end()
    }
}

/// A 2026-07-28 result with what the engine adds when missing: `resultType`
/// (`"complete"`) and, when `server_info` is given, `_meta` with the
/// server's identity. Read and written as text, without a tree: unchanged
/// when both are there; else the missing ones are written in front of the
/// other members, whose values are copied as they are (read once; the text
/// written is not read again). `Err` gives the result back when only a tree
/// will do (a `_meta` without the identity, a repeated `resultType` or
/// `_meta`, or not an object).
pub(crate) fn shape_modern<I: Serialize + ?Sized>(
    result: RawResult,
    server_info: Option<&I>,
) -> Result<RawResult, RawResult> {
    let text = result.get();
    if already_shaped(text, server_info.is_some()) == Some(true) {
        return Ok(result);
    }
    let Ok(Members(members)) = serde_json::from_str::<Members<'_>>(text) else {
        return Err(result);
    };
    let (mut result_type, mut meta) = (0usize, None);
    let mut metas = 0usize;
    for (key, value) in &members {
        match key.0.as_ref() {
            "resultType" => result_type += 1,
            "_meta" => {
                metas += 1;
                meta = Some(*value);
            }
            _ => {}
        }
    }
    if result_type > 1 || metas > 1 {
        return Err(result);
    }
    let add_meta = match (server_info, meta) {
        (None, _) => None,
        (Some(info), None) => Some(info),
        (Some(_), Some(meta)) => {
            let has_info = meta.get().starts_with('{')
                && serde_json::from_str::<MetaShape>(meta.get()).is_ok_and(|m| m.server_info.0);
            if !has_info {
                return Err(result);
            }
            None
        }
    };
    if result_type == 1 && add_meta.is_none() {
        return Ok(result);
    }
    let shaped = Shaped {
        result_type: result_type == 0,
        server_info: add_meta,
        members: &members,
    };
    match serde_json::value::to_raw_value(&shaped)
        .ok()
        .and_then(RawResult::new)
    {
        Some(shaped) => Ok(shaped),
        None => Err(result),
    }
}

/// Whether a result's text already has what [`shape_modern`] adds (a
/// `resultType`, and a `_meta` with the server's identity when `info`),
/// told by locating its members ([`tessera_types::json_scan`]) without
/// reading them: what an upstream 2026-07-28 server's answer passed on by
/// a proxy usually has. `None` when the scanner declines the text (keys
/// given twice or escaped): [`shape_modern`] reads it and decides.
fn already_shaped(text: &str, info: bool) -> Option<bool> {
    use tessera_types::json_scan::Object;
    let top = Object::scan(text)?;
    if top.has_odd_keys() {
        return None;
    }
    if top.find("resultType").is_none() {
        return Some(false);
    }
    if !info {
        return Some(true);
    }
    let Some(meta) = top.find("_meta") else {
        return Some(false);
    };
    let meta = Object::scan(text.get(meta.value.0..meta.value.1)?)?;
    if meta.has_odd_keys() {
        return None;
    }
    Some(meta.find("io.modelcontextprotocol/serverInfo").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> Option<(RequestId, String)> {
        result_response(s.as_bytes()).map(|(id, r)| (id, r.get().to_owned()))
    }

    #[test]
    fn a_raw_response_is_written_as_serde_writes_it() {
        let ids = [
            RequestId::Number(-12),
            RequestId::Number(i64::MAX),
            RequestId::from("a \"quoted\" \u{1} id"),
        ];
        let results = [
            "{}",
            r#"{"content":[{"type":"text","text":"h\u00e9"}],"n":1.5}"#,
        ];
        for id in ids {
            for text in results {
                let raw = RawValue::from_string(text.to_owned()).expect("json");
                let r = RawResponse {
                    id: id.clone(),
                    result: RawResult::new(raw).expect("an object"),
                };
                let mut out = Vec::new();
                r.write_to(&mut out).expect("written");
                assert_eq!(
                    String::from_utf8(out).expect("utf-8"),
                    serde_json::to_string(&r).expect("serialised")
                );
            }
        }
    }

    #[test]
    fn well_formed_results_pass_as_text() {
        assert_eq!(
            read(r#" {"jsonrpc":"2.0","id":7,"result":{"a":[1,{"b":null}]}}"#),
            Some((RequestId::Number(7), r#"{"a":[1,{"b":null}]}"#.to_owned()))
        );
        assert_eq!(
            read(r#"{"result":{},"id":"x\u0041","jsonrpc":"2.0","extra":1}"#),
            Some((RequestId::from("xA"), "{}".to_owned()))
        );
    }

    #[test]
    fn anything_else_goes_to_the_decoder() {
        for s in [
            "",
            "nope",
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"method":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":true,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":"\x"}}"#,
        ] {
            assert_eq!(read(s), None, "{s}");
        }
    }

    fn raw(s: &str) -> RawResult {
        RawResult::new(RawValue::from_string(s.to_owned()).unwrap()).unwrap()
    }

    fn shaped(s: &str, info: bool) -> Result<String, String> {
        let mut i = JsonObject::new();
        i.insert("name".into(), "s".into());
        shape_modern(raw(s), info.then_some(&i))
            .map(|r| r.get().to_owned())
            .map_err(|r| r.get().to_owned())
    }

    #[test]
    fn modern_results_are_completed_on_the_text() {
        let full = r#"{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}"#;
        assert_eq!(shaped(full, true), Ok(full.to_owned()));
        assert_eq!(
            shaped(r#"{"resultType":null}"#, false),
            Ok(r#"{"resultType":null}"#.to_owned())
        );
        assert_eq!(
            shaped(r#"{ "content" : [] }"#, true),
            Ok(r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"content":[]}"#.to_owned())
        );
        assert_eq!(
            shaped(r#"{"resultType":"complete"}"#, true),
            Ok(r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"resultType":"complete"}"#.to_owned())
        );
        assert_eq!(
            shaped("{ }", false),
            Ok(r#"{"resultType":"complete"}"#.to_owned())
        );
        assert_eq!(
            shaped(r#"{"a":1}"#, false),
            Ok(r#"{"resultType":"complete","a":1}"#.to_owned())
        );
        // Values are copied as they are; a name with escapes is written plainly.
        assert_eq!(
            shaped(r#"{"a\u0062" : [1, {"c" : "\n"}] ,"d":null}"#, true),
            Ok(r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}},"ab":[1, {"c" : "\n"}],"d":null}"#.to_owned())
        );
        // Only a tree can add the identity to an existing `_meta`.
        for s in [
            r#"{"resultType":"complete","_meta":null}"#,
            r#"{"resultType":"complete","_meta":[{}]}"#,
            r#"{"resultType":"complete","_meta":{"other":1}}"#,
            r#"{"_meta":{},"_meta":{}}"#,
            r#"{"resultType":"complete","resultType":"complete"}"#,
        ] {
            assert_eq!(shaped(s, true), Err(s.to_owned()), "{s}");
        }
        assert!(RawResult::new(RawValue::from_string("[1]".into()).unwrap()).is_none());
    }

    #[test]
    fn a_result_already_shaped_is_told_without_reading_it() {
        let full = r#"{"content":[{"text":"}"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}"#;
        assert_eq!(already_shaped(full, true), Some(true));
        assert_eq!(already_shaped(r#"{"resultType":1}"#, false), Some(true));
        assert_eq!(already_shaped(r#"{"resultType":1}"#, true), Some(false));
        assert_eq!(already_shaped(r#"{"a":1}"#, false), Some(false));
        assert_eq!(
            already_shaped(r#"{"resultType":1,"_meta":{"x":1}}"#, true),
            Some(false)
        );
        // Keys given twice or escaped, and a `_meta` that is no object:
        // for the full reading to decide.
        for s in [
            r#"{"resultType":1,"resultType":1}"#,
            r#"{"result\u0054ype":1}"#,
            r#"{"resultType":1,"_meta":{"io.modelcontextprotocol/serverInfo":1,"io.modelcontextprotocol/serverInfo":1}}"#,
            r#"{"resultType":1,"_meta":null}"#,
        ] {
            assert_eq!(already_shaped(s, true), None, "{s}");
        }
    }

    #[test]
    fn a_raw_response_is_written_as_a_json_rpc_response() {
        let r = RawResponse {
            id: RequestId::from("a"),
            result: raw(r#"{"x": 1}"#),
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"jsonrpc":"2.0","id":"a","result":{"x": 1}}"#
        );
        let o = Reply::Raw(r.result.clone()).into_object().unwrap();
        assert_eq!(o["x"], 1);
        assert_eq!(Reply::Object(o).into_raw().unwrap().get(), r#"{"x":1}"#);
    }
}
