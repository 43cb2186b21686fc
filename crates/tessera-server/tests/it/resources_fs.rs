//! `FsResources`: the files of a directory as resources, listed, read, and
//! never anything outside the directory, whatever the URI tries.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use serde_json::{Value, json};
use tessera_client::{Client, ClientError};
use tessera_server::{FsResources, Server, resource};
use tessera_testkit::pair::{ERAS, in_process};
use tessera_types::{JsonObject, ProtocolVersion};

const LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;
const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;
const SECRET: &str = "TOP-SECRET-CONTENTS";
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0xff];

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tessera-resources-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, rel: &str, bytes: &[u8]) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `scratch/root` is served; `scratch/outside` holds a secret next to it.
fn layout(tag: &str) -> (Scratch, PathBuf) {
    let s = Scratch::new(tag);
    s.write("root/a.txt", b"alpha\n");
    s.write("root/img.png", PNG);
    s.write("root/sub/b.md", b"# b\n");
    s.write("root/sub/deeper/c.json", b"{\"c\":1}");
    s.write("root/.env", SECRET.as_bytes());
    s.write("root/.git/config", SECRET.as_bytes());
    s.write("root/noext", b"plain words");
    s.write("root/bytes.bin", &[0, 159, 146, 150]);
    s.write("outside/secret.txt", SECRET.as_bytes());
    s.write("rootsibling/secret.txt", SECRET.as_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        let root = s.0.join("root");
        symlink(s.0.join("outside/secret.txt"), root.join("escape.txt")).unwrap();
        symlink(s.0.join("outside"), root.join("escape-dir")).unwrap();
        symlink(root.join("a.txt"), root.join("inner-link.txt")).unwrap();
        symlink(root.join(".env"), root.join("to-hidden.txt")).unwrap();
        symlink(&root, root.join("sub/loop")).unwrap();
    }
    let root = s.0.join("root");
    (s, root)
}

async fn connect(server: &Server, version: ProtocolVersion) -> Client {
    in_process(
        server,
        Client::builder("resources-fs-tests", "1.0").protocol_version(version),
    )
    .await
}

fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

async fn call(client: &Client, method: &str, params: Value) -> Result<JsonObject, ClientError> {
    client.request_raw(method, Some(object(params))).await
}

async fn read(client: &Client, uri: &str) -> Result<JsonObject, ClientError> {
    call(client, "resources/read", json!({ "uri": uri })).await
}

async fn list_all(client: &Client) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = call(client, "resources/list", params).await.expect("page");
        pages += 1;
        items.extend(page["resources"].as_array().unwrap().iter().cloned());
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => return (items, pages),
        }
    }
}

async fn fixed() -> &'static str {
    "fixed"
}

fn server(root: &Path, base: &str) -> Server {
    Server::builder()
        .page_size(3)
        .resource(resource("mem://fixed", "fixed").handler(fixed))
        .resources_from(FsResources::new(root).unwrap().base_uri(base))
        .build()
        .unwrap()
}

#[tokio::test]
async fn lists_files_sorted_and_paginated() {
    let (_s, root) = layout("list");
    let srv = server(&root, "fs:///");
    for v in ERAS {
        let c = connect(&srv, v).await;
        let (items, pages) = list_all(&c).await;
        let uris: Vec<&str> = items.iter().map(|r| r["uri"].as_str().unwrap()).collect();
        let mut want = vec![
            "mem://fixed",
            "fs:///a.txt",
            "fs:///bytes.bin",
            "fs:///img.png",
            "fs:///noext",
            "fs:///sub/b.md",
            "fs:///sub/deeper/c.json",
        ];
        if cfg!(unix) {
            // Links inside the root are listed; links outside it, to hidden
            // files or to directories are not.
            want.insert(4, "fs:///inner-link.txt");
        }
        assert_eq!(uris, want, "{v}");
        assert_eq!(pages, want.len().div_ceil(3));
        let png = items.iter().find(|r| r["uri"] == "fs:///img.png").unwrap();
        assert_eq!(
            *png,
            json!({"uri": "fs:///img.png", "name": "img.png", "mimeType": "image/png", "size": PNG.len()})
        );
        let md = items.iter().find(|r| r["uri"] == "fs:///sub/b.md").unwrap();
        assert_eq!(md["name"], json!("sub/b.md"));
        assert_eq!(md["mimeType"], json!("text/markdown"));
        for r in &items {
            assert!(!r.to_string().contains("secret"), "{r}");
        }
    }
}

#[tokio::test]
async fn reads_text_and_binary_files() {
    let (_s, root) = layout("read");
    let srv = server(&root, "fs:///");
    for v in ERAS {
        let c = connect(&srv, v).await;
        let r = read(&c, "fs:///a.txt").await.unwrap();
        assert_eq!(
            r["contents"],
            json!([{"uri": "fs:///a.txt", "mimeType": "text/plain", "text": "alpha\n"}])
        );
        if v == MODERN {
            assert_eq!(r["ttlMs"], json!(60_000));
        }
        let r = read(&c, "fs:///sub/deeper/c.json").await.unwrap();
        assert_eq!(r["contents"][0]["mimeType"], json!("application/json"));
        assert_eq!(r["contents"][0]["text"], json!("{\"c\":1}"));
        let r = read(&c, "fs:///img.png").await.unwrap();
        let item = &r["contents"][0];
        assert_eq!(item["mimeType"], json!("image/png"));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(item["blob"].as_str().unwrap())
            .unwrap();
        assert_eq!(bytes, PNG);
        let r = read(&c, "fs:///noext").await.unwrap();
        assert_eq!(r["contents"][0]["text"], json!("plain words"));
        let r = read(&c, "fs:///bytes.bin").await.unwrap();
        assert_eq!(
            r["contents"][0]["mimeType"],
            json!("application/octet-stream")
        );
        assert!(r["contents"][0]["blob"].is_string());
        if cfg!(unix) {
            let r = read(&c, "fs:///inner-link.txt").await.unwrap();
            assert_eq!(r["contents"][0]["text"], json!("alpha\n"));
        }
        // The fixed resource still answers.
        let r = read(&c, "mem://fixed").await.unwrap();
        assert_eq!(r["contents"][0]["text"], json!("fixed"));
    }
}

#[tokio::test]
async fn file_uris_by_default() {
    let (_s, root) = layout("file-uri");
    let fs = FsResources::new(&root).unwrap();
    let canonical = std::fs::canonicalize(&root).unwrap();
    assert_eq!(fs.root(), canonical);
    let base = fs.base().to_owned();
    assert!(
        base.starts_with("file:///") && base.ends_with("/root/"),
        "{base}"
    );
    let srv = Server::builder().resources_from(fs).build().unwrap();
    let c = connect(&srv, LEGACY).await;
    let r = read(&c, &format!("{base}a.txt")).await.unwrap();
    assert_eq!(r["contents"][0]["text"], json!("alpha\n"));
    // A real file outside the root, by its own file URI: not the provider's.
    let outside = std::fs::canonicalize(root.join("../outside/secret.txt")).unwrap();
    let r = read(&c, &format!("file://{}", outside.display())).await;
    assert_eq!(r.unwrap_err().remote().unwrap().code, -32002);
    let templates = call(&c, "resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        json!(format!("{base}{{+path}}"))
    );
}

#[tokio::test]
async fn never_escapes_the_root() {
    let (_s, root) = layout("escape");
    let srv = server(&root, "fs:///");
    let attempts = [
        "fs:///../outside/secret.txt",
        "fs:///sub/../../outside/secret.txt",
        "fs:///sub/./b.md",
        "fs:///./a.txt",
        "fs:///%2e%2e/outside/secret.txt",
        "fs:///%2E%2E/outside/secret.txt",
        "fs:///.%2e/outside/secret.txt",
        "fs:///sub/%2e%2e/%2e%2e/outside/secret.txt",
        "fs:///..%2Foutside%2Fsecret.txt",
        "fs:///sub%2F..%2F..%2Foutside%2Fsecret.txt",
        "fs:///%2Fetc%2Fpasswd",
        "fs:///..%5Coutside%5Csecret.txt",
        "fs:////etc/passwd",
        "fs:///sub//b.md",
        "fs:///a.txt%00.png",
        "fs:///a.txt?raw=1",
        "fs:///a.txt#frag",
        "fs:///%zz",
        "fs:///.env",
        "fs:///%2eenv",
        "fs:///.git/config",
        "fs:///escape.txt",
        "fs:///escape-dir/secret.txt",
        "fs:///to-hidden.txt",
        "fs:///sub/loop/.env",
        "fs:///../rootsibling/secret.txt",
        "fs:///sub",
        "fs:///",
        "fs:///nothing.txt",
    ];
    for v in ERAS {
        let c = connect(&srv, v).await;
        for uri in attempts {
            let r = read(&c, uri).await;
            let e = match &r {
                Ok(o) => panic!("{v} {uri} was served: {}", Value::Object(o.clone())),
                Err(e) => e.remote().cloned().unwrap_or_else(|| panic!("{e}")),
            };
            assert!(
                [-32602, -32002].contains(&e.code),
                "{v} {uri}: unexpected error {e:?}"
            );
            assert!(!format!("{e:?}").contains(SECRET), "{uri} leaked");
            if v == MODERN {
                assert_eq!(e.code, -32602, "{uri}");
            }
        }
        // The sources of truth are unharmed: the root still serves.
        assert!(read(&c, "fs:///sub/b.md").await.is_ok());
    }
}

#[tokio::test]
async fn refusals_say_why_and_missing_files_are_not_found() {
    let (_s, root) = layout("why");
    let srv = server(&root, "fs:///");
    let c = connect(&srv, LEGACY).await;
    for (uri, code) in [
        ("fs:///../outside/secret.txt", -32602),
        ("fs:///%2e%2e/outside/secret.txt", -32602),
        ("fs:///..%2Foutside", -32602),
        ("fs:////etc/passwd", -32602),
        ("fs:///a.txt%00", -32602),
        ("fs:///nothing.txt", -32002),
        ("fs:///sub", -32002),
        ("fs:///.env", -32002),
    ] {
        let e = read(&c, uri).await.unwrap_err();
        let e = e.remote().unwrap();
        assert_eq!(e.code, code, "{uri}: {e:?}");
        assert_eq!(e.data, Some(json!({ "uri": uri })));
    }
    #[cfg(unix)]
    for uri in ["fs:///escape.txt", "fs:///escape-dir/secret.txt"] {
        assert_eq!(
            read(&c, uri).await.unwrap_err().remote().unwrap().code,
            -32002
        );
    }
}

#[tokio::test]
async fn hidden_files_and_limits_are_configurable() {
    let (_s, root) = layout("options");
    let srv = Server::builder()
        .resources_from(
            FsResources::new(&root)
                .unwrap()
                .base_uri("fs:")
                .include_hidden(true)
                .max_file_size(5)
                .max_files(2),
        )
        .build()
        .unwrap();
    let c = connect(&srv, MODERN).await;
    let (items, _) = list_all(&c).await;
    let uris: Vec<&str> = items.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris.len(), 2, "{uris:?}");
    // Hidden files are readable now; "a.txt" (6 bytes) is over the limit.
    let r = read(&c, "fs:/.git/config").await;
    assert_eq!(
        r.unwrap_err().remote().unwrap().code,
        -32603,
        "over the size limit"
    );
    let r = read(&c, "fs:/a.txt").await;
    assert_eq!(r.unwrap_err().remote().unwrap().code, -32603);
    assert!(
        FsResources::new(root.join("a.txt")).is_err(),
        "not a directory"
    );
    assert!(FsResources::new(root.join("nothing")).is_err());
}
