use super::*;
use serde_json::json;

fn text(s: &str) -> Params {
    Params::from_raw(RawValue::from_string(s.to_owned()).unwrap()).unwrap()
}

fn tree(s: &str) -> Params {
    Params::from(serde_json::from_str::<JsonObject>(s).unwrap())
}

fn value(p: &Params) -> Value {
    serde_json::to_value(p).unwrap()
}

/// A proxy's edit: drops the progress token, stamps a tag, keeps a
/// malformed `_meta`, drops an emptied one.
fn proxy<'a>(set: &'a [(&'a str, Cow<'a, Value>)]) -> MetaEdit<'a> {
    MetaEdit {
        remove: &["progressToken", "gone"],
        set_if_object: &[],
        set,
        fill: &[],
        not_object: NotObject::Keep,
        drop_empty: true,
    }
}

/// The same edit, on the text and on the tree, gives the same params.
fn same_both_ways(input: &str, edit: &MetaEdit<'_>) -> Value {
    let mut t = text(input);
    t.edit_meta(edit);
    let mut o = tree(input);
    o.edit_meta(edit);
    assert!(t.raw().is_some(), "{input}: still text");
    assert_eq!(value(&t), value(&o), "{input}");
    value(&t)
}

#[test]
fn only_meta_changes_and_the_other_members_stay_as_written() {
    let set = [("tag", Cow::Owned(json!(7)))];
    let input =
        r#"{"name":"a\"b","arguments":{ "x" : [1, 2.50] },"_meta":{"progressToken":3,"k":"v"}}"#;
    let mut p = text(input);
    p.edit_meta(&proxy(&set));
    assert_eq!(
        p.raw().unwrap().get(),
        r#"{"name":"a\"b","arguments":{ "x" : [1, 2.50] },"_meta":{"k":"v","tag":7}}"#
    );
    same_both_ways(input, &proxy(&set));
}

#[test]
fn escaped_keys_are_read_as_what_they_spell() {
    let set = [("tag", Cow::Owned(json!(1)))];
    let out = same_both_ways(
        r#"{"n\u0061me":"caf\u00e9 \"x\"","\u005fmeta":{"progress\u0054oken":"t","k":1}}"#,
        &proxy(&set),
    );
    assert_eq!(
        out,
        json!({"name": "café \"x\"", "_meta": {"k": 1, "tag": 1}})
    );
    // Nothing to add, and `_meta` only spelled with an escape: still removed.
    let out = same_both_ways(r#"{"\u005fmeta":{"progressToken":1}}"#, &proxy(&[]));
    assert_eq!(out, json!({}));
}

#[test]
fn a_key_given_twice_keeps_its_last_value() {
    let out = same_both_ways(
        r#"{"a":1,"_meta":{"x":1},"a":2,"_meta":{"y":2,"y":3}}"#,
        &proxy(&[]),
    );
    assert_eq!(out, json!({"a": 2, "_meta": {"y": 3}}));
}

#[test]
fn a_meta_that_is_not_an_object_is_kept_or_replaced() {
    let set = [("tag", Cow::Owned(json!(1)))];
    for input in [r#"{"_meta":null,"a":1}"#, r#"{"_meta":[1],"a":1}"#] {
        let mut p = text(input);
        p.edit_meta(&proxy(&set));
        assert_eq!(p.raw().unwrap().get(), input, "kept as it is");
        let replace = MetaEdit {
            not_object: NotObject::Replace,
            ..proxy(&set)
        };
        let out = same_both_ways(input, &replace);
        assert_eq!(out, json!({"_meta": {"tag": 1}, "a": 1}));
    }
}

#[test]
fn set_replaces_and_fill_only_adds() {
    let set = [("v", Cow::Owned(json!("new")))];
    let caps = json!({"x": {}});
    let fill = [
        ("caps", Cow::Borrowed(&caps)),
        ("info", Cow::Owned(json!("i"))),
    ];
    let edit = MetaEdit {
        remove: &[],
        set_if_object: &[],
        set: &set,
        fill: &fill,
        not_object: NotObject::Replace,
        drop_empty: false,
    };
    let out = same_both_ways(r#"{"_meta":{"v":"old","info":"mine"}}"#, &edit);
    assert_eq!(
        out,
        json!({"_meta": {"v": "new", "info": "mine", "caps": {"x": {}}}})
    );
}

#[test]
fn absent_and_empty_params() {
    let set = [("tag", Cow::Owned(json!(2)))];
    // Absent params get a `_meta` only when something is added.
    let mut none = None;
    edit_meta_of(&mut none, &proxy(&[]));
    assert!(none.is_none());
    edit_meta_of(&mut none, &proxy(&set));
    assert_eq!(value(none.as_ref().unwrap()), json!({"_meta": {"tag": 2}}));
    // Empty params: untouched without additions, and still empty.
    let mut p = text("{ }");
    p.edit_meta(&proxy(&[]));
    assert_eq!(p.raw().unwrap().get(), "{ }");
    assert!(p.is_empty_object());
    assert_eq!(
        same_both_ways("{}", &proxy(&set)),
        json!({"_meta": {"tag": 2}})
    );
    // A `_meta` emptied by the edit goes, leaving empty params.
    let mut p = text(r#"{"_meta":{"progressToken":"x"}}"#);
    p.edit_meta(&proxy(&[]));
    assert!(p.is_empty_object());
    assert!(!text(r#"{"a":1}"#).is_empty_object());
    assert!(tree("{}").is_empty_object());
}

#[test]
fn params_without_meta_are_not_rewritten_when_nothing_is_added() {
    let input = r#"{"name":"x", "arguments":{}}"#;
    let mut p = text(input);
    p.edit_meta(&proxy(&[]));
    assert_eq!(p.raw().unwrap().get(), input);
    // What was read of the old text is forgotten after an edit.
    let mut p = text(r#"{"name":"x","_meta":{"k":1}}"#);
    assert_eq!(p.meta().unwrap().get("k"), Some(&json!(1)));
    p.edit_meta(&MetaEdit {
        remove: &["k"],
        ..proxy(&[])
    });
    assert!(p.meta().is_none());
    assert_eq!(p.name(), Some(&json!("x")));
}

#[test]
fn a_senders_changes_apply_to_an_object_or_absent_meta_only() {
    let mine = [("tag", Cow::Owned(json!(1)))];
    let engine = [("v", Cow::Owned(json!("x")))];
    let edit = MetaEdit {
        remove: &["progressToken"],
        set_if_object: &mine,
        set: &engine,
        fill: &[],
        not_object: NotObject::Replace,
        drop_empty: true,
    };
    let out = same_both_ways(r#"{"a":1,"_meta":{"progressToken":1,"k":2}}"#, &edit);
    assert_eq!(out, json!({"a": 1, "_meta": {"k": 2, "tag": 1, "v": "x"}}));
    assert_eq!(
        same_both_ways(r#"{"a":1}"#, &edit),
        json!({"a": 1, "_meta": {"tag": 1, "v": "x"}})
    );
    // Not an object: the engine's members replace it, the sender's do not
    // apply (as when the sender left it as it was and the engine replaced it).
    assert_eq!(
        same_both_ways(r#"{"_meta":"odd"}"#, &edit),
        json!({"_meta": {"v": "x"}})
    );
}

#[test]
fn an_edit_of_text_notes_the_mirrored_members_as_written() {
    const V: &str = "io.modelcontextprotocol/protocolVersion";
    let stamp = [(V, Cow::Owned(json!("2026-07-28")))];
    let edit = MetaEdit {
        remove: &[],
        set_if_object: &[],
        set: &stamp,
        fill: &[],
        not_object: NotObject::Replace,
        drop_empty: false,
    };
    // The head noted is what a reader of the written text finds.
    for input in [
        r#"{"name":"echo","arguments":{"name":"no","uri":"no"},"_meta":{"k":1}}"#,
        r#"{"uri":"file:///a","_meta":"odd"}"#,
        r#"{"n\u0061me":"caf\u00e9","name":"last","uri":7}"#,
        r#"{"name":null}"#,
    ] {
        let mut p = text(input);
        let head = p.edit_meta(&edit).expect("the text was written again");
        let written = text(p.raw().unwrap().get());
        assert_eq!(head.name.as_ref(), written.name(), "{input}");
        assert_eq!(head.uri.as_ref(), written.uri(), "{input}");
        assert_eq!(head.version.as_deref(), Some("2026-07-28"), "{input}");
    }
    let mut p = text(r#"{"name":"last","name":"echo"}"#);
    let head = p.edit_meta(&edit).unwrap();
    assert_eq!((head.name, head.uri), (Some(json!("echo")), None));
    // A version the edit leaves as it was, read from the text; one that is
    // not a string is not a version.
    let keep = MetaEdit {
        set: &[],
        fill: &[("x", Cow::Owned(json!(1)))],
        ..edit
    };
    let mut p = text(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v1"}}"#);
    assert_eq!(p.edit_meta(&keep).unwrap().version.as_deref(), Some("v1"));
    let mut p = text(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}"#);
    assert_eq!(p.edit_meta(&keep).unwrap().version, None);
    // Edited as a tree, or not written again: nothing noted.
    let mut t = tree(r#"{"name":"echo"}"#);
    assert_eq!(t.edit_meta(&edit), None);
    let mut p = text(r#"{"name":"echo","_meta":"odd"}"#);
    assert_eq!(
        p.edit_meta(&MetaEdit {
            not_object: NotObject::Keep,
            ..keep
        }),
        None
    );
}

/// The quick way (the members located by a scanner, `_meta` written in
/// place) gives what reading the members with serde_json gives, and the
/// same mirrored members; it declines keys given twice or escaped and a
/// `_meta` taken out, which the other way does.
#[test]
fn the_splice_and_the_full_read_agree() {
    const V: &str = "io.modelcontextprotocol/protocolVersion";
    let caps = json!({"experimental": {"x": {}}});
    let tag = [("tag", Cow::Owned(json!(7)))];
    let modern = [
        (V, Cow::Owned(json!("2026-07-28"))),
        ("tag", Cow::Owned(json!("t\"q"))),
    ];
    let fill = [("caps", Cow::Borrowed(&caps))];
    let edits = [
        proxy(&tag),
        MetaEdit {
            remove: &["progressToken", V],
            set_if_object: &tag,
            set: &modern,
            fill: &fill,
            not_object: NotObject::Replace,
            drop_empty: true,
        },
        MetaEdit {
            fill: &fill,
            drop_empty: false,
            ..proxy(&[])
        },
    ];
    let plain = [
        "{}",
        " { } ",
        r#"{"name":"echo","arguments":{"text":"a \"}\" b","n":[1,{"_meta":2}]}}"#,
        r#"{ "name" : "echo" , "_meta" : { "progressToken" : 1 , "k" : [ ] } , "z" : null }"#,
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","tag":1},"uri":"u"}"#,
        r#"{"name":"caf\u00e9","_meta":{}}"#,
        r#"{"_meta":"odd","name":7}"#,
        r#"{"_meta":null}"#,
    ];
    for edit in &edits {
        for input in plain {
            let quick = splice::splice(input, edit).expect("plain text");
            let full = edit_text(input, edit);
            match (quick, full) {
                (splice::Spliced::Unchanged, None) => {}
                (splice::Spliced::Edited(text, head), Some((raw, full_head))) => {
                    let a: Value = serde_json::from_str(&text).expect("valid JSON");
                    let b: Value = serde_json::from_str(raw.get()).unwrap();
                    assert_eq!(a, b, "{input}");
                    assert_eq!(head, full_head, "{input}");
                }
                (q, f) => panic!(
                    "{input}: quick {}, full {:?}",
                    matches!(q, splice::Spliced::Unchanged),
                    f.map(|f| f.0)
                ),
            }
        }
    }
    for odd in [
        r#"{"a":1,"a":2,"_meta":{}}"#,
        r#"{"_meta":{"k":1,"k":2}}"#,
        r#"{"\u005fmeta":{}}"#,
        r#"{"_meta":{"progressToken":1}}"#,
    ] {
        assert!(splice::splice(odd, &proxy(&[])).is_none(), "{odd}");
    }
}

/// The splice on the places the head's pass noted (no scan) gives the
/// params the full read gives, for edits of well-known keys; it declines
/// `_meta` given twice or with keys escaped or given twice.
#[test]
fn the_placed_splice_and_the_full_read_agree() {
    use crate::meta::{
        CLIENT_CAPABILITIES as C, CLIENT_INFO as I, LOG_LEVEL as L, PROGRESS_TOKEN as P,
        PROTOCOL_VERSION as V, REQUEST_TAG as T,
    };
    let caps = json!({"sampling": {}});
    let info = json!({"name": "c", "version": "1"});
    let tag = [(T, Cow::Owned(json!(7)))];
    let declare = [
        (C, Cow::Borrowed(&caps)),
        (I, Cow::Borrowed(&info)),
        (T, Cow::Owned(json!("t\"q"))),
    ];
    let stamp = [
        (V, Cow::Owned(json!("2026-07-28"))),
        (P, Cow::Owned(json!(3))),
    ];
    let fill = [(C, Cow::Borrowed(&caps)), (I, Cow::Borrowed(&info))];
    let edits = [
        MetaEdit {
            remove: &[P],
            ..proxy(&tag)
        },
        MetaEdit {
            remove: &[V, C, I, L, P],
            ..proxy(&tag)
        },
        MetaEdit {
            remove: &[P],
            ..proxy(&declare)
        },
        MetaEdit {
            remove: &[P, V],
            set_if_object: &tag,
            set: &stamp,
            fill: &fill,
            not_object: NotObject::Replace,
            drop_empty: true,
        },
        MetaEdit {
            remove: &[P, V],
            ..proxy(&[])
        },
        MetaEdit {
            remove: &[P],
            fill: &fill,
            drop_empty: false,
            ..proxy(&[])
        },
    ];
    let plain = [
        "{}",
        " { } ",
        r#"{"name":"echo","arguments":{"text":"a \"}\" b","n":[1,{"_meta":2}]}}"#,
        r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"progressToken":5}}"#,
        "{ \"_meta\" : { \"x\" : 1 ,\n\"progressToken\" : \"p\" , \"y\" : [ \",\" ] , \"io.tessera/requestTag\" : 2 } , \"uri\" : \"u\" }",
        r#"{"_meta":{"progressToken":1}}"#,
        r#"{"_meta":{},"name":7}"#,
        r#"{"_meta":{ } }"#,
        r#"{"name":"a","_meta":{"k":{"progressToken":1},"progressToken":2,"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}"#,
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"x\u0041","z":null}}"#,
    ];
    let mut placed = 0;
    for edit in &edits {
        for input in plain {
            let p = text(input);
            assert!(p.meta_place().is_none(), "no head read yet: {input}");
            let _ = p.name();
            // An empty `_meta`'s end is not noted: left to the scan.
            let Some(place) = p.meta_place() else {
                assert!(input.replace(' ', "").contains(r#""_meta":{}"#), "{input}");
                continue;
            };
            let quick = splice::splice_placed(p.raw().unwrap().get(), &place, edit);
            let full = edit_text(input, edit);
            match (quick, full) {
                (Some(splice::Spliced::Unchanged), None) => placed += 1,
                (Some(splice::Spliced::Edited(text, head)), Some((raw, full_head))) => {
                    let a: Value = serde_json::from_str(&text).expect("valid JSON");
                    let b: Value = serde_json::from_str(raw.get()).unwrap();
                    assert_eq!(a, b, "{input}");
                    assert_eq!(head, full_head, "{input}");
                    placed += 1;
                }
                // `_meta` emptied and taken out: left to the other ways.
                (None, Some((raw, _))) if edit.drop_empty => {
                    let b: JsonObject = serde_json::from_str(raw.get()).unwrap();
                    assert!(!b.contains_key("_meta"), "{input}");
                }
                (q, f) => panic!("{input}: placed {}, full {:?}", q.is_some(), f.map(|f| f.0)),
            }
            let mut edited = text(input);
            let _ = edited.name();
            edited.edit_meta(edit);
            let mut o = tree(input);
            o.edit_meta(edit);
            assert_eq!(value(&edited), value(&o), "{input}");
        }
    }
    assert!(placed >= 40, "{placed}");
    // Keys not well known are left to the scan.
    let p = text(r#"{"_meta":{"k":1}}"#);
    let _ = p.name();
    let place = p.meta_place().unwrap();
    assert!(splice::splice_placed(r#"{"_meta":{"k":1}}"#, &place, &proxy(&[])).is_none());
    for odd in [
        r#"{"_meta":{"progressToken":1,"progressToken":2}}"#,
        r#"{"_meta":{"k":1,"k":2}}"#,
        r#"{"_meta":{"progress\u0054oken":1}}"#,
        r#"{"_meta":{"\u006b":1,"progressToken":1}}"#,
        r#"{"_meta":{"a":1},"_meta":{"progressToken":2}}"#,
        r#"{"\u005fmeta":{"progressToken":2},"_meta":{}}"#,
        r#"{"_meta":"odd"}"#,
    ] {
        let p = text(odd);
        let _ = p.name();
        let declined = p
            .meta_place()
            .is_none_or(|place| splice::splice_placed(odd, &place, &edits[0]).is_none());
        assert!(declined, "{odd}");
        same_both_ways(odd, &edits[0]);
    }
}
