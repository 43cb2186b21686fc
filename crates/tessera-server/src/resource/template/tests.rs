//! Tests of parsing, expansion and matching.

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

#[test]
fn repeated_variables_stay_within_the_budget() {
    // A fuzzer's input (kept as fuzz/corpus/uri_template/repeated-variables-timeout):
    // repeated variables turn the memo off, and it used to take 15 s of an
    // unoptimised build. Work is counted, not timed: every split, every
    // part looked at and the bytes read all come out of one budget, and a
    // match stops within one step of spending it.
    let template = "{/a*}{ag}{frag}{e}{ag}{frag}{exp}\u{f}\0\0\0\0\0\0\0e";
    let uri = "/}{ag}{frag}{e}{ag}{frag]/y'z/}";
    let t = UriTemplate::parse(template).unwrap();
    for candidate in [uri, template] {
        let (found, spent) = matcher::Matcher::new(&t.parts, candidate, !t.repeats).run_counted();
        assert_eq!(found, None, "{candidate:?}");
        assert!(
            spent <= MATCH_BUDGET + 64,
            "{spent} units for {candidate:?}"
        );
    }
    // A long URI against a chain of adjacent expressions costs no more.
    let t = UriTemplate::parse("x://{a}{b}{a}{b}{c}{c}!").unwrap();
    let uri = format!("x://{}?", "ab".repeat(2000));
    let (found, spent) = matcher::Matcher::new(&t.parts, &uri, !t.repeats).run_counted();
    assert_eq!(found, None);
    assert!(spent <= MATCH_BUDGET + 512, "{spent} units");
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
