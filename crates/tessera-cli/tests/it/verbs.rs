//! The client verbs of the built binary against the reference server
//! (`tessera serve`), over stdio and Streamable HTTP, in both eras: exact
//! `--json` documents, readable output, exit codes, progress and logs on
//! stderr, refused and piped input requests, named servers from a config
//! file, completions, `--version` and `tessera bench`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use tessera_testkit::Running;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_tessera");

/// `tessera serve --http` on a free loopback port, stopped on drop.
struct HttpServer {
    child: Running,
    url: String,
}

impl HttpServer {
    fn start() -> HttpServer {
        let child = Command::new(BIN)
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tessera serve --http");
        // Dropped (killed and waited for) on every path, panics included.
        let mut server = HttpServer {
            child: Running(child),
            url: String::new(),
        };
        let mut err = BufReader::new(server.child.stderr.take().unwrap());
        let mut line = String::new();
        // The server announces its address once it listens (or exits: EOF).
        loop {
            line.clear();
            let n = err.read_line(&mut line).unwrap();
            assert!(n > 0, "tessera serve --http exited before listening");
            if let Some(at) = line.find("http://127.0.0.1:") {
                server.url = line[at..]
                    .split([';', ' ', '\n'])
                    .next()
                    .unwrap()
                    .to_owned();
                // Keep draining stderr so the server never blocks on it.
                std::thread::spawn(move || for _ in err.lines() {});
                return server;
            }
        }
    }
}

/// Where a verb connects, and in which era.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Via {
    Stdio,
    Http,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Era {
    Legacy,
    Modern,
}

const ALL: [(Via, Era); 4] = [
    (Via::Stdio, Era::Legacy),
    (Via::Stdio, Era::Modern),
    (Via::Http, Era::Legacy),
    (Via::Http, Era::Modern),
];

/// Runs `tessera VERB ARGS... --era E TARGET` (stdin closed).
fn run(verb: &[&str], via: Via, era: Era, http: &HttpServer) -> Output {
    let mut args: Vec<String> = verb.iter().map(|s| (*s).to_owned()).collect();
    args.push("--era".into());
    args.push(match era {
        Era::Legacy => "legacy".into(),
        Era::Modern => "modern".into(),
    });
    match via {
        Via::Http => args.push(http.url.clone()),
        Via::Stdio => args.extend(["--".into(), BIN.into(), "serve".into(), "--stdio".into()]),
    }
    tessera(&args)
}

fn tessera<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run tessera")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The whole stdout, which must be exactly one JSON document.
fn json_doc(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", err(o));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", out(o)))
}

/// What a 2026-07-28 result carries besides the legacy one.
fn modern(mut v: Value, era: Era) -> Value {
    if era == Era::Modern {
        let o = v.as_object_mut().unwrap();
        o.insert(
            "_meta".into(),
            json!({"io.modelcontextprotocol/serverInfo": {"name": "tessera-reference", "version": env!("CARGO_PKG_VERSION")}}),
        );
        o.insert("resultType".into(), json!("complete"));
    }
    v
}

#[test]
fn json_outputs_are_exactly_the_protocol_results() {
    let http = HttpServer::start();
    for (via, era) in ALL {
        let at = format!("{via:?}/{era:?}");
        let v = json_doc(&run(
            &["read", "test://static-text", "--json"],
            via,
            era,
            &http,
        ));
        let mut want = modern(
            json!({"contents": [{"uri": "test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}]}),
            era,
        );
        if era == Era::Modern {
            want["cacheScope"] = json!("public");
            want["ttlMs"] = json!(60000);
        }
        assert_eq!(v, want, "read {at}");

        let v = json_doc(&run(
            &["call", "echo", r#"{"text":"hi"}"#, "--json"],
            via,
            era,
            &http,
        ));
        assert_eq!(
            v,
            modern(json!({"content": [{"type": "text", "text": "hi"}]}), era),
            "call {at}"
        );

        let v = json_doc(&run(
            &[
                "complete",
                "prompt",
                "test_prompt_with_arguments",
                "arg1",
                "pa",
                "--json",
            ],
            via,
            era,
            &http,
        ));
        assert_eq!(
            v,
            modern(
                json!({"completion": {"values": ["paris", "park", "parrot"], "total": 3, "hasMore": false}}),
                era
            ),
            "complete {at}"
        );

        let v = json_doc(&run(
            &["get", "test_simple_prompt", "--json"],
            via,
            era,
            &http,
        ));
        assert_eq!(
            v,
            modern(
                json!({"description": "A simple prompt without arguments", "messages": [
                {"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]}),
                era
            ),
            "get {at}"
        );

        let v = json_doc(&run(
            &[
                "get",
                "test_prompt_with_arguments",
                r#"{"arg1":"a","arg2":"b"}"#,
                "--json",
            ],
            via,
            era,
            &http,
        ));
        assert_eq!(
            v["messages"][0]["content"]["text"], "Prompt with arguments: arg1='a', arg2='b'",
            "get with arguments {at}"
        );

        let v = json_doc(&run(&["discover", "--json"], via, era, &http));
        match era {
            Era::Legacy => {
                assert_eq!(v["protocolVersion"], "2025-11-25", "{at}");
                assert_eq!(v["serverInfo"]["name"], "tessera-reference", "{at}");
            }
            Era::Modern => {
                assert!(
                    v["supportedVersions"]
                        .as_array()
                        .unwrap()
                        .contains(&json!("2026-07-28")),
                    "{at}"
                );
                assert!(v.get("protocolVersion").is_none(), "{at}");
            }
        }
        assert!(v["capabilities"]["tools"].is_object(), "{at}");

        let v = json_doc(&run(&["ping", "--json"], via, era, &http));
        if era == Era::Legacy {
            assert_eq!(v, json!({}), "ping {at}");
        } else {
            assert!(v["supportedVersions"].is_array(), "ping {at}");
        }

        for (what, key, name_key, name) in [
            ("tools", "tools", "name", "echo"),
            ("resources", "resources", "uri", "test://static-text"),
            (
                "templates",
                "resourceTemplates",
                "uriTemplate",
                "test://template/{id}/data",
            ),
            ("prompts", "prompts", "name", "test_simple_prompt"),
        ] {
            let v = json_doc(&run(&["list", what, "--json"], via, era, &http));
            let items = v[key]
                .as_array()
                .unwrap_or_else(|| panic!("list {what} {at}: {v}"));
            assert!(
                items.iter().any(|i| i[name_key] == name),
                "list {what} {at}: {v}"
            );
            assert!(v.get("nextCursor").is_none());
        }
    }
}

#[test]
fn readable_outputs() {
    let http = HttpServer::start();
    for (via, era) in ALL {
        let at = format!("{via:?}/{era:?}");
        let o = run(&["list", "tools"], via, era, &http);
        assert!(o.status.success(), "{at}: {}", err(&o));
        assert!(
            out(&o)
                .lines()
                .any(|l| l.starts_with("echo ") && l.contains("Sends the given text back")),
            "{at}"
        );
        let o = run(&["list", "prompts"], via, era, &http);
        assert!(
            out(&o)
                .lines()
                .any(|l| l.starts_with("test_prompt_with_arguments") && l.contains("arg1 arg2")),
            "{at}: {}",
            out(&o)
        );
        let o = run(&["read", "test://template/7/data"], via, era, &http);
        let v: Value =
            serde_json::from_str(out(&o).trim()).unwrap_or_else(|_| panic!("{at}: {}", out(&o)));
        assert_eq!(v["data"], "Data for ID: 7", "{at}");
        let o = run(&["call", "add", r#"{"a":2,"b":40}"#], via, era, &http);
        assert_eq!(out(&o), "42\n", "{at}");
        let o = run(
            &[
                "complete",
                "prompt",
                "test_prompt_with_arguments",
                "arg1",
                "py",
            ],
            via,
            era,
            &http,
        );
        assert_eq!(out(&o), "python\n", "{at}");
        let o = run(&["get", "test_simple_prompt"], via, era, &http);
        assert_eq!(
            out(&o),
            "# A simple prompt without arguments\nuser: This is a simple prompt for testing.\n",
            "{at}"
        );
        let o = run(&["discover"], via, era, &http);
        let text = out(&o);
        assert!(
            text.starts_with(&format!(
                "server:       tessera-reference {}\n",
                env!("CARGO_PKG_VERSION")
            )),
            "{at}: {text}"
        );
        let (how, version) = match era {
            Era::Legacy => ("era:          legacy", "protocol:     2025-11-25"),
            Era::Modern => ("era:          modern", "protocol:     2026-07-28"),
        };
        assert!(text.contains(how) && text.contains(version), "{at}: {text}");
        assert!(
            text.contains("instructions: The Tessera reference server"),
            "{at}: {text}"
        );
        let o = run(&["ping"], via, era, &http);
        assert!(
            o.status.success() && out(&o).contains(" ms"),
            "{at}: {}",
            err(&o)
        );
    }
}

#[test]
fn exit_codes() {
    let http = HttpServer::start();
    for (via, era) in ALL {
        let at = format!("{via:?}/{era:?}");
        let code = |verb: &[&str]| run(verb, via, era, &http).status.code();
        // 1: a JSON-RPC error from the server.
        assert_eq!(code(&["call", "no_such_tool"]), Some(1), "{at}");
        assert_eq!(code(&["get", "no_such_prompt"]), Some(1), "{at}");
        assert_eq!(code(&["read", "test://nothing-here"]), Some(1), "{at}");
        // 2: usage.
        assert_eq!(code(&["call", "echo", "{not json"]), Some(2), "{at}");
        assert_eq!(code(&["call", "echo", "[1]"]), Some(2), "{at}");
        assert_eq!(
            code(&["get", "test_simple_prompt", r#"{"a":1}"#]),
            Some(2),
            "{at}"
        );
        // 5: the tool reported an error; the text goes to stderr.
        let o = run(&["call", "test_error_handling"], via, era, &http);
        assert_eq!(o.status.code(), Some(5), "{at}");
        assert!(err(&o).contains("tool error:"), "{at}");
        let o = run(&["call", "test_error_handling", "--json"], via, era, &http);
        assert_eq!(o.status.code(), Some(5), "{at}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["isError"], true);
        // Elicitation without a terminal: refused with a message. Legacy: the
        // tool reports the refusal (5); 2026-07-28: the input request fails (8).
        let o = run(
            &["call", "test_elicitation", r#"{"message":"Your name?"}"#],
            via,
            era,
            &http,
        );
        assert!(
            err(&o).contains("Your name?") && err(&o).contains("stdin is not a terminal"),
            "{at}: {}",
            err(&o)
        );
        assert_eq!(
            o.status.code(),
            Some(if era == Era::Legacy { 5 } else { 8 }),
            "{at}: {}",
            err(&o)
        );
        let o = run(
            &["call", "test_sampling", r#"{"prompt":"hi"}"#, "--no-input"],
            via,
            era,
            &http,
        );
        assert!(
            err(&o).contains("no --sampling-command"),
            "{at}: {}",
            err(&o)
        );
        assert_eq!(
            o.status.code(),
            Some(if era == Era::Legacy { 5 } else { 8 }),
            "{at}"
        );
        // 9: log-level where the protocol has no session log level.
        let want = if era == Era::Modern { Some(9) } else { Some(0) };
        assert_eq!(
            code(&["log-level", "debug", "--for", "0.2", "--json"]),
            want,
            "{at}"
        );
    }
    // 6: no answer within --timeout (the tool takes a second).
    let o = tessera(&[
        "call",
        "test_reconnection",
        "--timeout",
        "0.2",
        "--",
        BIN,
        "serve",
        "--stdio",
    ]);
    assert_eq!(o.status.code(), Some(6), "{}", err(&o));
    // 3: nothing listens there.
    let o = tessera(&["ping", "http://127.0.0.1:9/mcp"]);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
    let o = tessera(&["ping", "--", "/nonexistent/server"]);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
    // 2: no target, two targets, an era that does not fit the version.
    assert_eq!(tessera(&["ping"]).status.code(), Some(2));
    assert_eq!(
        tessera(&["ping", "http://127.0.0.1:9/mcp", "--", "x"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        tessera(&[
            "ping",
            "--era",
            "legacy",
            "--protocol-version",
            "2026-07-28",
            "--",
            "x"
        ])
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        tessera(&["ping", "--protocol-version", "1999-01-01", "--", "x"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn pinned_versions() {
    for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let o = tessera(&[
            "discover",
            "--json",
            "--protocol-version",
            v,
            "--",
            BIN,
            "serve",
            "--stdio",
        ]);
        assert_eq!(json_doc(&o)["protocolVersion"], v);
    }
    let o = tessera(&[
        "discover",
        "--protocol-version",
        "2026-07-28",
        "--",
        BIN,
        "serve",
        "--stdio",
    ]);
    assert!(out(&o).contains("protocol:     2026-07-28"), "{}", out(&o));
}

#[test]
fn progress_logs_and_sampling_command() {
    let http = HttpServer::start();
    for (via, era) in ALL {
        let at = format!("{via:?}/{era:?}");
        let o = run(
            &["call", "test_tool_with_progress", "--json"],
            via,
            era,
            &http,
        );
        assert!(o.status.success(), "{at}");
        // stdout holds only the result; one line per update on stderr.
        let _ = json_doc(&o);
        let lines: Vec<String> = err(&o)
            .lines()
            .filter(|l| l.starts_with("progress: "))
            .map(str::to_owned)
            .collect();
        assert_eq!(
            lines,
            [
                "progress: 0/100 (0%) Completed step 1",
                "progress: 50/100 (50%) Completed step 2",
                "progress: 100/100 (100%) Completed step 3"
            ],
            "{at}: {}",
            err(&o)
        );
        let o = run(
            &["call", "test_tool_with_logging", "--log-level", "debug"],
            via,
            era,
            &http,
        );
        assert!(o.status.success(), "{at}");
        assert!(
            err(&o).contains("[info] test_tool_with_logging: Tool execution started"),
            "{at}: {}",
            err(&o)
        );
        assert!(
            err(&o).contains("[info] test_tool_with_logging: Tool execution completed"),
            "{at}"
        );
        let o = run(
            &[
                "call",
                "test_sampling",
                r#"{"prompt":"hi"}"#,
                "--sampling-command",
                "cat >/dev/null; echo a reply",
            ],
            via,
            era,
            &http,
        );
        assert!(o.status.success(), "{at}: {}", err(&o));
        assert!(out(&o).contains("a reply"), "{at}: {}", out(&o));
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tessera-verbs-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn named_servers_from_a_config_file() {
    let http = HttpServer::start();
    let dir = temp_dir("config");
    let file = dir.join("mcp.json");
    let cfg = json!({"mcpServers": {
        "local": {"command": BIN, "args": ["serve", "--stdio"], "env": {"TESSERA_LOG": "warn"}},
        "remote": {"type": "http", "url": http.url, "headers": {"X-Test": "1"}},
        "broken": {"url": "ftp://nope"}
    }});
    std::fs::write(&file, cfg.to_string()).unwrap();
    let f = file.to_str().unwrap();
    for name in ["local", "remote"] {
        let o = tessera(&[
            "call",
            "echo",
            r#"{"text":"named"}"#,
            "--config",
            f,
            "--server",
            name,
        ]);
        assert_eq!(out(&o), "named\n", "{name}: {}", err(&o));
    }
    // The default file: $TESSERA_CONFIG.
    let o = Command::new(BIN)
        .args(["list", "tools", "--server", "local"])
        .env("TESSERA_CONFIG", &file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out(&o).contains("echo"), "{}", err(&o));
    let o = tessera(&["ping", "--config", f, "--server", "missing"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("local") && err(&o).contains("remote"),
        "{}",
        err(&o)
    );
    let o = tessera(&["ping", "--config", f, "--server", "broken"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("not an http(s) URL"), "{}", err(&o));
    let o = tessera(&["ping", "--config", f, "--server", "local", "--", "x"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn completions_version_and_help() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef tessera"),
        ("fish", "complete -c tessera"),
    ] {
        let o = tessera(&["completions", shell]);
        assert!(o.status.success(), "{shell}");
        let s = out(&o);
        assert!(s.contains(marker), "{shell}: {}", &s[..s.len().min(200)]);
        for verb in ["discover", "log-level", "bench"] {
            assert!(s.contains(verb), "{shell} lacks {verb}");
        }
    }
    assert_eq!(tessera(&["completions", "tcsh"]).status.code(), Some(2));
    let o = tessera(&["--version"]);
    assert!(o.status.success());
    assert!(
        out(&o).contains("2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"),
        "{}",
        out(&o)
    );
    for args in [
        vec!["--help"],
        vec!["call", "--help"],
        vec!["bench", "--help"],
    ] {
        let o = tessera(&args);
        let s = out(&o);
        assert!(
            s.contains("Exit codes:") && s.contains(" 5  the tool reported an error (isError)"),
            "{args:?}"
        );
    }
}

#[test]
fn bench_reports_and_is_bounded() {
    let http = HttpServer::start();
    for target in [
        vec![http.url.clone()],
        vec!["--".into(), BIN.into(), "serve".into(), "--stdio".into()],
    ] {
        let mut args: Vec<String> = [
            "bench",
            "echo",
            r#"{"text":"x"}"#,
            "-c",
            "4",
            "-d",
            "0.5",
            "--json",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        args.extend(target.clone());
        let v = json_doc(&tessera(&args));
        let n = v["requests"].as_u64().unwrap();
        assert!(n > 0, "{v}");
        assert_eq!(v["ok"].as_u64(), Some(n), "{v}");
        assert_eq!(v["errors"], json!({}));
        let l = &v["latencyMs"];
        assert!(l["p50"].as_f64().unwrap() <= l["p90"].as_f64().unwrap());
        assert!(l["p99"].as_f64().unwrap() <= l["max"].as_f64().unwrap());
        // A request count bound stops it early.
        let mut args: Vec<String> = [
            "bench",
            "echo",
            r#"{"text":"x"}"#,
            "-c",
            "2",
            "-d",
            "60",
            "-n",
            "25",
            "--json",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        args.extend(target);
        let v = json_doc(&tessera(&args));
        assert_eq!(v["requests"], 25, "{v}");
    }
    // Errors by kind, exit 10.
    let o = tessera(&["bench", "no_such_tool", "-c", "2", "-d", "0.3", &http.url]);
    assert_eq!(o.status.code(), Some(10), "{}", err(&o));
    assert!(out(&o).contains("server error -32602"), "{}", out(&o));
    // Not loopback: refused unless --allow-remote; limits are usage errors.
    for args in [
        vec!["bench", "echo", "https://mcp.example.com/mcp"],
        vec!["bench", "echo", "-c", "0", &http.url],
        vec!["bench", "echo", "-c", "5000", &http.url],
        vec!["bench", "echo", "-d", "99999", &http.url],
        vec!["bench", "echo", "-n", "0", &http.url],
    ] {
        assert_eq!(tessera(&args).status.code(), Some(2), "{args:?}");
    }
}
