//! The Skills extension on the server: entries built from directories
//! (digests of text and binary files, nested skills, prefixes), the limits,
//! pagination, `skills/get`, directory reads, reloads and dynamic skills,
//! in both eras.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use serde_json::{Value, json};
use tessera_client::{Client, ClientError};
use tessera_server::skills::{DynamicSkill, SkillFile, Skills, SkillsError};
use tessera_server::{ResourceError, Server};
use tessera_testkit::pair::{ERAS, in_process};
use tessera_types::{
    JsonObject, ProtocolVersion, Skill, SkillResources, SkillsSettings, skill_digest,
};

const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0xff, 0xfe,
];

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tessera-skills-{tag}-{}-{}",
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

    fn skill(&self, path: &str, extra: &str) {
        let name = path.rsplit('/').next().unwrap();
        self.write(
            &format!("{path}/SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill\n{extra}---\n\n# {name}\n")
                .as_bytes(),
        );
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn connect(server: &Server, version: ProtocolVersion) -> Client {
    in_process(
        server,
        Client::builder("skills-tests", "1.0").protocol_version(version),
    )
    .await
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other}"),
    }
}

fn rpc_code(e: ClientError) -> i64 {
    match e.remote() {
        Some(o) => o.code,
        None => panic!("expected a JSON-RPC error, got {e:?}"),
    }
}

/// The tree most tests use: a prefixed skill, a skill with a nested one,
/// a UTF-8 file and a binary file.
fn tree() -> Scratch {
    let s = Scratch::new("tree");
    s.skill("acme/billing/refunds", "license: Apache-2.0\n");
    s.write(
        "acme/billing/refunds/examples/email.md",
        "Grüße, {name}\n".as_bytes(),
    );
    s.skill("pdf", "metadata:\n  version: \"2.1\"\n  tags: \"a, b\"\n");
    s.write("pdf/assets/logo.png", PNG);
    s.write("pdf/templates/regional/eu.md", b"EU\n");
    s.skill("pdf/nested-one", "");
    s.write(".hidden/skip.md", b"never served");
    s
}

#[tokio::test]
async fn entries_digests_nesting_and_reads_in_both_eras() {
    let dir = tree();
    let server = Server::builder()
        .extension(Skills::from_dirs([&dir.0]).unwrap())
        .build()
        .unwrap();
    let caps = server.capabilities();
    assert!(caps.resources.is_some(), "the extension needs resources");
    let settings = caps
        .extension_settings::<SkillsSettings>()
        .unwrap()
        .unwrap();
    assert_eq!(settings.directory_read, Some(true));

    for version in ERAS {
        let client = connect(&server, version).await;
        let raw = client.request_raw("skills/list", None).await.unwrap();
        assert_eq!(
            raw.contains_key("ttlMs"),
            version == ProtocolVersion::V2026_07_28
        );
        let skills: Vec<Skill> = serde_json::from_value(raw["skills"].clone()).unwrap();
        let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "skill://acme/billing/refunds/SKILL.md",
                "skill://pdf/SKILL.md",
                "skill://pdf/nested-one/SKILL.md"
            ]
        );
        // Verbatim frontmatter.
        assert_eq!(
            Value::Object(skills[1].frontmatter.clone()),
            json!({"name": "pdf", "description": "The pdf skill",
                   "metadata": {"version": "2.1", "tags": "a, b"}})
        );
        // The enclosing skill lists the nested skill's files too.
        let SkillResources::Files(pdf) = &skills[1].resources else {
            panic!("static skill")
        };
        let pdf_uris: Vec<&str> = pdf.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            pdf_uris,
            [
                "skill://pdf/SKILL.md",
                "skill://pdf/assets/logo.png",
                "skill://pdf/nested-one/SKILL.md",
                "skill://pdf/templates/regional/eu.md"
            ]
        );
        // Binary file: digest and size of the raw bytes, read back as a blob.
        let logo = skills[1].file("skill://pdf/assets/logo.png").unwrap();
        assert_eq!(logo.size, PNG.len() as u64);
        assert_eq!(logo.digest, skill_digest(PNG));
        let read = client
            .read_resource("skill://pdf/assets/logo.png")
            .await
            .unwrap();
        let blob = serde_json::to_value(&read.contents[0]).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(blob["blob"].as_str().unwrap())
            .unwrap();
        assert_eq!(bytes, PNG);
        // UTF-8 file: the size counts bytes, not characters.
        let email = skills[0]
            .file("skill://acme/billing/refunds/examples/email.md")
            .unwrap();
        let text = "Grüße, {name}\n";
        assert_eq!(email.size, text.len() as u64);
        assert_eq!(email.digest, skill_digest(text.as_bytes()));
        let read = client
            .read_resource("skill://acme/billing/refunds/examples/email.md")
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&read.contents[0]).unwrap()["text"],
            json!(text)
        );

        // skills/get: the same entry; -32602 for anything that is not a skill.
        let got = client
            .request_raw(
                "skills/get",
                Some(obj(json!({"uri": "skill://pdf/SKILL.md"}))),
            )
            .await
            .unwrap();
        assert_eq!(got["skill"], serde_json::to_value(&skills[1]).unwrap());
        assert!(!got.contains_key("nextCursor"));
        for bad in [
            json!({"uri": "skill://pdf/assets/logo.png"}),
            json!({"uri": "skill://nope/SKILL.md"}),
            json!({"uri": 3}),
            json!({}),
        ] {
            let e = client
                .request_raw("skills/get", Some(obj(bad)))
                .await
                .unwrap_err();
            assert_eq!(rpc_code(e), -32602);
        }

        // resources/list shows each SKILL.md named by its frontmatter.
        let listed = client.list_resources().await.unwrap();
        let refunds = listed
            .iter()
            .find(|r| r.uri == "skill://acme/billing/refunds/SKILL.md")
            .unwrap();
        assert_eq!(refunds.name, "refunds");
        assert_eq!(refunds.description.as_deref(), Some("The refunds skill"));
        assert_eq!(refunds.mime_type.as_deref(), Some("text/markdown"));
        assert!(!listed.iter().any(|r| r.uri.contains("hidden")));
        client.close().await;
    }
}

#[tokio::test]
async fn directory_reads() {
    let dir = tree();
    let server = Server::builder()
        .extension(Skills::from_dirs([&dir.0]).unwrap())
        .page_size(2)
        .build()
        .unwrap();
    for version in ERAS {
        let client = connect(&server, version).await;
        let read = |uri: &str, cursor: Option<String>| {
            let mut p = obj(json!({ "uri": uri }));
            if let Some(c) = cursor {
                p.insert("cursor".into(), json!(c));
            }
            client.request_raw("resources/directory/read", Some(p))
        };
        // The skill root, over two pages (page size 2).
        let first = read("skill://pdf", None).await.unwrap();
        // Cacheable like skills/list and resources/list: 2026-07-28 peers
        // (the TypeScript SkillsClient) require ttlMs and cacheScope.
        let modern = version == ProtocolVersion::V2026_07_28;
        assert_eq!(first.contains_key("ttlMs"), modern, "{first:?}");
        assert_eq!(first.contains_key("cacheScope"), modern, "{first:?}");
        if modern {
            assert!(first["ttlMs"].is_u64(), "{first:?}");
            assert!(first["cacheScope"].is_string(), "{first:?}");
            assert_eq!(first["resultType"], json!("complete"), "{first:?}");
        }
        let cursor = first["nextCursor"].as_str().unwrap().to_owned();
        let second = read("skill://pdf", Some(cursor)).await.unwrap();
        assert!(!second.contains_key("nextCursor"));
        let mut children: Vec<Value> = first["resources"].as_array().unwrap().clone();
        children.extend(second["resources"].as_array().unwrap().iter().cloned());
        let shape: Vec<(String, String)> = children
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_owned(),
                    c["mimeType"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("SKILL.md".to_owned(), "text/markdown".to_owned()),
                ("assets".to_owned(), "inode/directory".to_owned()),
                ("nested-one".to_owned(), "inode/directory".to_owned()),
                ("templates".to_owned(), "inode/directory".to_owned()),
            ]
        );
        // A subdirectory, and a prefix directory above a skill.
        let sub = read("skill://pdf/templates", None).await.unwrap();
        assert_eq!(
            sub["resources"][0]["uri"],
            json!("skill://pdf/templates/regional")
        );
        let prefix = read("skill://acme", None).await.unwrap();
        assert_eq!(prefix["resources"][0]["uri"], json!("skill://acme/billing"));
        // Files and unknown URIs are not directories.
        for bad in ["skill://pdf/SKILL.md", "skill://pdf/missing", "file:///etc"] {
            assert_eq!(
                rpc_code(read(bad, None).await.unwrap_err()),
                -32602,
                "{bad}"
            );
        }
        // A cursor of another directory is refused.
        let other = read("skill://acme/billing/refunds", None).await.unwrap();
        assert!(other.get("nextCursor").is_none());
        let first = read("skill://pdf", None).await.unwrap();
        let c = first["nextCursor"].as_str().unwrap().to_owned();
        assert_eq!(
            rpc_code(read("skill://acme", Some(c)).await.unwrap_err()),
            -32602
        );
        client.close().await;
    }
}

#[tokio::test]
async fn pagination_across_many_skills_keeps_entries_whole() {
    let dir = Scratch::new("many");
    for i in 0..23 {
        dir.skill(&format!("team-{}/skill-{i:02}", i % 3), "");
        dir.write(&format!("team-{}/skill-{i:02}/notes.md", i % 3), b"n\n");
    }
    let server = Server::builder()
        .extension(Skills::from_dirs([&dir.0]).unwrap())
        .page_size(5)
        .build()
        .unwrap();
    for version in ERAS {
        let client = connect(&server, version).await;
        let mut cursor: Option<String> = None;
        let mut seen = Vec::new();
        let mut pages = 0;
        loop {
            let params = cursor.as_ref().map(|c| obj(json!({ "cursor": c })));
            let page = client.request_raw("skills/list", params).await.unwrap();
            let skills: Vec<Skill> = serde_json::from_value(page["skills"].clone()).unwrap();
            for s in skills {
                let SkillResources::Files(files) = &s.resources else {
                    panic!("static")
                };
                assert_eq!(files.len(), 2, "an entry comes whole");
                seen.push(s.uri);
            }
            pages += 1;
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
            assert!(pages < 10, "the listing ends");
        }
        assert_eq!(pages, 5);
        assert_eq!(seen.len(), 23);
        let mut sorted = seen.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, seen, "every skill once, in order");
        let e = client
            .request_raw("skills/list", Some(obj(json!({"cursor": "forged"}))))
            .await
            .unwrap_err();
        assert_eq!(rpc_code(e), -32602);
        client.close().await;
    }
}

/// Loads `dirs`, which must leave out exactly one skill (and serve
/// `served`), and gives why it was left out.
fn skipped_one(dirs: &[&PathBuf], served: usize) -> SkillsError {
    let skills = Skills::from_dirs(dirs.iter().copied()).expect("the load goes on");
    assert_eq!(skills.entries().len(), served, "{:?}", skills.entries());
    let mut skipped = skills.skipped();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    skipped.remove(0)
}

#[test]
fn a_skill_that_breaks_a_rule_is_skipped_naming_it() {
    // 512 files is fine, 513 is not.
    let dir = Scratch::new("files");
    dir.skill("big", "");
    for i in 0..511 {
        dir.write(&format!("big/f/{i}.txt"), b"x");
    }
    assert_eq!(Skills::from_dirs([&dir.0]).unwrap().entries().len(), 1);
    dir.write("big/f/one-more.txt", b"x");
    let e = skipped_one(&[&dir.0], 0);
    assert!(matches!(
        e,
        SkillsError::TooManyFiles {
            files: 513,
            limit: 512,
            ..
        }
    ));
    assert!(
        e.to_string().contains("skill big") && e.to_string().contains("512"),
        "{e}"
    );

    // 16 MiB in total is fine, one byte more is not.
    let dir = Scratch::new("bytes");
    dir.skill("huge", "");
    let md = std::fs::metadata(dir.0.join("huge/SKILL.md"))
        .unwrap()
        .len();
    let rest = usize::try_from(16 * 1024 * 1024 - md).unwrap();
    dir.write("huge/blob.bin", &vec![7u8; rest]);
    assert_eq!(Skills::from_dirs([&dir.0]).unwrap().entries().len(), 1);
    dir.write("huge/blob.bin", &vec![7u8; rest + 1]);
    let e = skipped_one(&[&dir.0], 0);
    assert!(matches!(e, SkillsError::TooLarge { .. }));
    assert!(
        e.to_string().contains("skill huge") && e.to_string().contains("16 MiB"),
        "{e}"
    );

    // The name must be the directory name, and a valid one; the others
    // beside it are served.
    let dir = Scratch::new("names");
    dir.write("good/SKILL.md", b"---\nname: other\ndescription: d\n---\n");
    dir.skill("fine", "");
    let e = skipped_one(&[&dir.0], 1);
    assert!(e.to_string().contains("skill good"), "{e}");
    let dir = Scratch::new("names2");
    dir.skill("Bad_Name", "");
    skipped_one(&[&dir.0], 0);
    let dir = Scratch::new("meta");
    dir.skill("meta", "metadata:\n  tags: [a, b]\n");
    let e = skipped_one(&[&dir.0], 0);
    assert!(e.to_string().contains("metadata"), "{e}");
    let dir = Scratch::new("names3");
    dir.write("nodesc/SKILL.md", b"---\nname: nodesc\n---\n");
    let e = skipped_one(&[&dir.0], 0);
    assert!(e.to_string().contains("description"), "{e}");
    // Two roots serving the same URI: the first one wins.
    let a = Scratch::new("dup-a");
    a.skill("same", "");
    let b = Scratch::new("dup-b");
    b.skill("same", "");
    assert!(matches!(
        skipped_one(&[&a.0, &b.0], 1),
        SkillsError::Duplicate(_)
    ));
    // A root that is not a directory fails the load.
    assert!(Skills::from_dirs([a.0.join("same/SKILL.md")]).is_err());
}

#[test]
fn a_frontmatter_over_64_kib_is_skipped() {
    // Before: a 10 MB frontmatter made every skills/list answer 10.5 MB.
    let dir = Scratch::new("frontmatter");
    let under = format!("license: \"{}\"\n", "l".repeat(60 * 1024));
    dir.skill("roomy", &under);
    let over = format!("license: \"{}\"\n", "l".repeat(10 * 1024 * 1024));
    dir.skill("bloated", &over);
    let e = skipped_one(&[&dir.0], 1);
    assert!(
        matches!(
            e,
            SkillsError::FrontmatterTooLarge {
                limit: 65_536,
                bytes,
                ..
            } if bytes > 10 * 1024 * 1024
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("skill bloated") && e.to_string().contains("64 KiB"),
        "{e}"
    );
    let skills = Skills::from_dirs([&dir.0]).unwrap();
    let listed = serde_json::to_vec(&skills.entries()).unwrap().len();
    assert!(listed < 64 * 1024, "{listed} bytes listed");
}

#[tokio::test]
async fn a_link_swapped_in_after_loading_is_not_followed() {
    let outside = Scratch::new("outside");
    outside.write("secret.txt", b"TOP SECRET\n");
    outside.write("dir/notes.md", b"TOP SECRET\n");
    let dir = Scratch::new("swap");
    dir.skill("victim", "");
    dir.write("victim/notes.md", b"notes\n");
    dir.write("victim/sub/notes.md", b"notes\n");
    let skills = Arc::new(Skills::from_dirs([&dir.0]).unwrap());
    let server = Server::builder()
        .extension_arc(skills.clone())
        .build()
        .unwrap();
    let client = connect(&server, ProtocolVersion::V2026_07_28).await;
    let read =
        |uri: &'static str| client.request_raw("resources/read", Some(obj(json!({ "uri": uri }))));
    let text = |r: JsonObject| r["contents"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(
        text(read("skill://victim/notes.md").await.unwrap()),
        "notes\n"
    );
    assert_eq!(
        text(read("skill://victim/sub/notes.md").await.unwrap()),
        "notes\n"
    );

    // A listed file replaced by a link to a file outside the root, and a
    // listed directory by a link to a directory outside.
    std::fs::remove_file(dir.0.join("victim/notes.md")).unwrap();
    std::os::unix::fs::symlink(outside.0.join("secret.txt"), dir.0.join("victim/notes.md"))
        .unwrap();
    std::fs::remove_dir_all(dir.0.join("victim/sub")).unwrap();
    std::os::unix::fs::symlink(outside.0.join("dir"), dir.0.join("victim/sub")).unwrap();
    for uri in ["skill://victim/notes.md", "skill://victim/sub/notes.md"] {
        let e = read(uri).await.unwrap_err();
        assert_eq!(rpc_code(e), -32602, "{uri}");
    }

    // A concurrent invalid skill no longer freezes reloads: the reload goes
    // on (the links are not part of any skill) and the invalid one is
    // skipped.
    dir.write("broken/SKILL.md", b"no frontmatter");
    assert!(skills.reload().unwrap());
    assert_eq!(skills.skipped().len(), 1, "{:?}", skills.skipped());
    let entry = &skills.entries()[0];
    assert!(entry.file("skill://victim/notes.md").is_none());
    assert!(entry.file("skill://victim/sub/notes.md").is_none());
    for uri in ["skill://victim/notes.md", "skill://victim/sub/notes.md"] {
        assert!(read(uri).await.is_err(), "{uri}");
    }
    client.close().await;
}

#[tokio::test]
async fn reload_picks_up_changes_and_announces_them() {
    let dir = Scratch::new("reload");
    dir.skill("first", "");
    let skills = Arc::new(Skills::from_dirs([&dir.0]).unwrap());
    let server = Server::builder()
        .extension_arc(skills.clone())
        .build()
        .unwrap();
    let client = connect(&server, ProtocolVersion::V2025_11_25).await;
    let mut notes = client.events();
    assert!(!skills.reload().unwrap(), "nothing changed");
    dir.skill("second", "");
    dir.write("first/new.md", b"new\n");
    assert!(skills.reload().unwrap());
    let e = tokio::time::timeout(std::time::Duration::from_secs(10), notes.recv())
        .await
        .expect("announced")
        .unwrap();
    assert_eq!(e.method(), Some("notifications/resources/list_changed"));
    let listed = client.request_raw("skills/list", None).await.unwrap();
    let skills_now: Vec<Skill> = serde_json::from_value(listed["skills"].clone()).unwrap();
    assert_eq!(skills_now.len(), 2);
    assert!(skills_now[0].file("skill://first/new.md").is_some());
    // A broken skill is left out; the others stay served.
    dir.write("second/SKILL.md", b"no frontmatter");
    assert!(skills.reload().unwrap());
    assert_eq!(skills.entries().len(), 1);
    assert_eq!(skills.skipped().len(), 1);
    client.close().await;
}

struct Daily;

impl DynamicSkill for Daily {
    fn frontmatter(&self) -> JsonObject {
        obj(json!({"name": "daily", "description": "Today's report"}))
    }
    async fn files(&self) -> Result<Vec<SkillFile>, ResourceError> {
        Ok(vec![
            SkillFile::new(
                "SKILL.md",
                "---\nname: daily\ndescription: Today's report\n---\nRead data/today.csv\n",
            ),
            SkillFile::new("data/today.csv", "a,b\n1,2\n"),
        ])
    }
}

#[tokio::test]
async fn dynamic_skills_are_generated_on_read() {
    let skills = Skills::empty().dynamic("reports/daily", Daily).unwrap();
    assert!(Skills::empty().dynamic("reports/Daily", Daily).is_err());
    let server = Server::builder().extension(skills).build().unwrap();
    for version in ERAS {
        let client = connect(&server, version).await;
        let listed = client.request_raw("skills/list", None).await.unwrap();
        assert_eq!(
            listed["skills"],
            json!([{"uri": "skill://reports/daily/SKILL.md",
                    "frontmatter": {"name": "daily", "description": "Today's report"},
                    "resources": "dynamic"}])
        );
        let read = client
            .read_resource("skill://reports/daily/data/today.csv")
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&read.contents[0]).unwrap()["text"],
            json!("a,b\n1,2\n")
        );
        let dir = client
            .request_raw(
                "resources/directory/read",
                Some(obj(json!({"uri": "skill://reports/daily"}))),
            )
            .await
            .unwrap();
        assert_eq!(dir["resources"][1]["mimeType"], json!("inode/directory"));
        assert!(
            client
                .read_resource("skill://reports/daily/missing")
                .await
                .is_err()
        );
        client.close().await;
    }
}
