use super::*;
use crate::JsonObject;
use crate::borrowed::BorrowedStr;
use crate::received_meta::ReceivedMeta;

/// Reads `params` of a message's text the way the decoder does: with a
/// [`ParamsSeed`] when the key was borrowed from the text.
fn read_in_message(message: &str) -> Option<ParamsRead<'_>> {
    struct Envelope<'b>(&'b [u8]);
    impl<'de> Visitor<'de> for Envelope<'de> {
        type Value = Option<ParamsRead<'de>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(k) = map.next_key::<BorrowedStr<'de>>()? {
                if *k == *"params" {
                    let seed = ParamsSeed::after_key(self.0, &k).expect("a borrowed key");
                    found = Some(map.next_value_seed(seed)?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(found)
        }
    }
    let mut d = serde_json::Deserializer::from_slice(message.as_bytes());
    d.deserialize_map(Envelope(message.as_bytes())).unwrap()
}

/// Params whose head is read from their own text on first use (the
/// reading before the one pass).
fn alone(text: &str) -> Params {
    Params::from_raw(RawValue::from_string(text.to_owned()).unwrap()).unwrap()
}

/// What a tree says of the member `key`: its count in the text is not in
/// a tree, so only the last value is compared.
fn last_value(text: &str, key: &str) -> Option<Value> {
    serde_json::from_str::<JsonObject>(text)
        .unwrap()
        .get(key)
        .cloned()
}

/// The params' head read in the message's pass is the head read from the
/// params' own text, and both agree with a tree.
fn agrees(params: &str) {
    for message in [
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#),
        format!("{{ \"params\" \n:\t{params} , \"id\" : 1 }}"),
        format!(r#"{{"params":{params}}}"#),
    ] {
        let Some(ParamsRead::Object(read)) = read_in_message(&message) else {
            panic!("not read in one pass: {message}");
        };
        assert_eq!(read.text(), params.trim(), "{message}");
        let one = Params::from_read(read);
        let two = alone(params.trim());
        assert_eq!(one.raw().unwrap().get(), params.trim());
        assert_eq!(
            one.meta().map(ReceivedMeta::object),
            two.meta().map(ReceivedMeta::object),
            "{message}"
        );
        assert_eq!(
            one.meta().map(ReceivedMeta::text),
            two.meta().map(ReceivedMeta::text)
        );
        assert_eq!(one.name(), two.name(), "{message}");
        assert_eq!(one.uri(), two.uri(), "{message}");
        for key in ["requestState", "inputResponses"] {
            assert_eq!(one.may_have(key), two.may_have(key), "{key}: {message}");
        }
        for key in NOTED {
            let noted = one.noted(key).unwrap();
            assert_eq!(Some(noted), two.noted(key), "{key}: {message}");
            let tree = last_value(params, key);
            assert_eq!(noted.count > 0, tree.is_some(), "{key}: {message}");
            if let Some(text) = noted.text {
                let value: Value = serde_json::from_str(text).unwrap();
                assert_eq!(Some(&value), tree.as_ref(), "{key}: {message}");
            }
            assert_eq!(one.member(key), tree, "{key}: {message}");
            assert_eq!(two.member(key), tree, "{key}: {message}");
        }
        assert!(one.tree.get().is_none(), "no tree: {message}");
    }
}

#[test]
fn params_read_in_the_message_s_pass_are_read_as_on_their_own() {
    for params in [
        r#"{"name":"echo","arguments":{"text":"Hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7}}"#,
        r#"{"name":"a\"b\\c","arguments":{"t":"\"}{]["},"uri":"file:///x"}"#,
        r#"{"arguments":{"deep":{"a":[1,{"b":[{}]}]},"x":"}"},"name":"n"}"#,
        r#"{"name":"n"}"#,
        r#"{"name":"n","arguments":null}"#,
        r#"{"name":"n","arguments":[1,2]}"#,
        r#"{"name":"n","arguments":"text"}"#,
        r#"{"name":"n","arguments":-1.5e3}"#,
        r#"{"name":"n","arguments":true}"#,
        r#"{"name":"first","name":"last","arguments":{"a":1},"arguments":{"b":2}}"#,
        r#"{"_meta":{"a":1},"_meta":{"b":2},"name":7}"#,
        r#"{"_meta":null,"name":"n"}"#,
        r#"{"_meta":[{}],"name":"n"}"#,
        r#"{"_meta":"{}","name":"n"}"#,
        r#"{"_meta":{},"name":"n"}"#,
        r#"{"_meta":{"k":1},"_meta":false,"name":"n"}"#,
        r#"{"name":{"nested":"object"},"uri":[1]}"#,
        r#"{"requestState":"s","inputResponses":{},"task":{"ttl":1}}"#,
        r#"{"task":null,"task":{"ttl":2},"name":"n"}"#,
        r#"{"_meta":{"\"k\"":1},"name":"n"}"#,
        r#"{"x":{"name":"nested","_meta":{"in":"arguments"}},"name":"top"}"#,
        " { \"name\" : \"spaced\" ,\n\t\"arguments\" : { } , \"_meta\" : { \"k\" : [ ] } \r\n} ",
        r#"{"name":"é ✓","arguments":{"s":"日本"}}"#,
        "{}",
        "{ \n }",
    ] {
        agrees(params);
    }
}

#[test]
fn escaped_keys_are_the_keys_they_spell() {
    // Escapes other than `\u` (a frame with `\u` goes the tree's way).
    agrees(r#"{"na\"me":"not the name","\\name":1,"name":"n"}"#);
    let Some(ParamsRead::Object(read)) =
        read_in_message(r#"{"params":{"a\nb":{"c":"d"},"name":"n"}}"#)
    else {
        panic!("not read in one pass");
    };
    assert_eq!(read.text(), r#"{"a\nb":{"c":"d"},"name":"n"}"#);
    // `_meta` whose first key has escapes: read again on its own.
    agrees(r#"{"_meta":{"a\"b":1,"progressToken":2},"name":"n","x":0}"#);
    let p = Params::from_read(
        match read_in_message(r#"{"params":{"_meta":{"a\"b":1,"progressToken":2},"name":"n"}}"#) {
            Some(ParamsRead::Object(read)) => read,
            other => panic!("{other:?}"),
        },
    );
    assert_eq!(
        p.meta()
            .unwrap()
            .member::<Value>("progressToken")
            .unwrap()
            .unwrap(),
        2
    );
}

#[test]
fn what_one_pass_cannot_bound_is_read_again() {
    // The last member's value ends where the pass cannot tell.
    for params in [
        r#"{"name":"n","_meta":null}"#,
        r#"{"name":"n","_meta":{}}"#,
        r#"{"name":"n","_meta":[1]}"#,
        r#"{"name":"n","_meta":{"a\"b":1}}"#,
    ] {
        let message = format!(r#"{{"params":{params},"id":1}}"#);
        assert!(
            matches!(read_in_message(&message), Some(ParamsRead::Again)),
            "{params}"
        );
    }
    for params in ["[]", "[{}]", "\"{}\"", "null", "1", "true"] {
        let message = format!(r#"{{"params":{params},"id":1}}"#);
        assert!(
            matches!(read_in_message(&message), Some(ParamsRead::NotObject)),
            "{params}"
        );
    }
}

#[test]
fn read_text_becomes_a_raw_value_without_being_read_again() {
    use serde::Deserialize;
    use serde::de::value::MapDeserializer;
    let text = r#"{"a" : [1, "}"]}"#;
    // The form serde_json gives a raw value in: if a later serde_json no
    // longer takes it, `raw_of_read` still works (by reading the text).
    let given: MapDeserializer<'_, _, serde_json::Error> =
        MapDeserializer::new(std::iter::once((RAW_VALUE_TOKEN, text)));
    assert_eq!(Box::<RawValue>::deserialize(given).unwrap().get(), text);
    assert_eq!(raw_of_read(text).get(), text);
    assert_eq!(serde_json::to_string(&alone(text)).unwrap(), text);
}

/// `_meta`'s place and its well-known members' places, noted in the
/// message's pass, are those noted over the params' own text.
#[test]
fn the_meta_place_is_the_same_in_the_message_pass() {
    let params =
        r#"{"name":"n", "_meta" : {"k":1, "progressToken" : 2,"io.tessera/requestTag":"t"} }"#;
    let message = format!(r#"{{"jsonrpc":"2.0","id":1,"params":{params}}}"#);
    let Some(ParamsRead::Object(read)) = read_in_message(&message) else {
        panic!("not read in one pass");
    };
    let one = Params::from_read(read);
    let two = alone(params);
    let _ = two.meta();
    let (a, b) = (one.meta_place().unwrap(), two.meta_place().unwrap());
    let ((ma, at_a), (mb, at_b)) = (a.at.unwrap(), b.at.unwrap());
    assert_eq!(at_a, at_b);
    assert_eq!(params.get(at_a.0..at_a.1), Some(ma.text()));
    assert_eq!(ma.plain_places(), mb.plain_places());
    let places = ma.plain_places().unwrap();
    let (key, (vs, ve)) = places[4].unwrap();
    assert_eq!(&ma.text()[key..ve], r#""progressToken" : 2"#);
    assert_eq!(&ma.text()[vs..ve], "2");
}
