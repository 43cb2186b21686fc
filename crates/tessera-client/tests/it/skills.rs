//! The Skills extension on the client: entries, loading with verification
//! (size, digest, frontmatter), tampered content caught, the cache, and
//! servers without the extension — in both eras.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tessera_client::{ClientError, SkillCache, VerificationProblem};
use tessera_server::Server;
use tessera_server::skills::Skills;
use tessera_testkit::prelude::{ERAS, builder, in_process};
use tessera_types::{SkillResources, skill_digest};

const SKILL_MD: &str =
    "---\nname: pdf\ndescription: Fill PDFs\nlicense: MIT\n---\n\nUse forms/FORMS.md.\n";
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0, 0xff, 0xfe, 0x01];

struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tessera-client-skills-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let s = Scratch(dir);
        s.write("pdf/SKILL.md", SKILL_MD.as_bytes());
        s.write("pdf/forms/FORMS.md", "Formulare für Kunden\n".as_bytes());
        s.write("pdf/logo.png", PNG);
        s
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

fn problem(e: ClientError) -> VerificationProblem {
    match e {
        ClientError::SkillVerification(v) => v.problem,
        other => panic!("expected a verification failure, got {other:?}"),
    }
}

#[tokio::test]
async fn lists_gets_loads_and_reads_verified() {
    let dir = Scratch::new();
    let server = Server::builder()
        .extension(Skills::from_dirs([&dir.0]).unwrap())
        .build()
        .unwrap();
    for version in ERAS {
        let client = in_process(&server, builder(version)).await;
        assert!(client.supports_skills() && client.supports_directory_read());
        let skills = client.skills_list().await.unwrap();
        assert_eq!(skills.len(), 1);
        let entry = client.skills_get("skill://pdf/SKILL.md").await.unwrap();
        assert_eq!(entry, skills[0]);
        let loaded = client.load_skill(&entry).await.unwrap();
        assert_eq!(loaded.text, SKILL_MD);
        // Relative paths resolve against the skill's root; binary files too.
        let forms = client
            .read_skill_file(&entry, "forms/FORMS.md")
            .await
            .unwrap();
        assert_eq!(forms, "Formulare für Kunden\n".as_bytes());
        let logo = client
            .read_skill_file(&entry, "skill://pdf/logo.png")
            .await
            .unwrap();
        assert_eq!(logo, PNG);
        // A file the entry does not list is refused without being fetched.
        let e = client
            .read_skill_file(&entry, "secret.txt")
            .await
            .unwrap_err();
        assert_eq!(problem(e), VerificationProblem::NotListed);
        // Directory reads.
        let d = client.read_directory("skill://pdf", None).await.unwrap();
        let names: Vec<&str> = d.resources.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["SKILL.md", "forms", "logo.png"]);
        // An unknown skill is the server's -32602.
        let e = client
            .skills_get("skill://nope/SKILL.md")
            .await
            .unwrap_err();
        assert_eq!(e.remote().map(|r| r.code), Some(-32602));
        client.close().await;
    }
}

#[tokio::test]
async fn tampered_content_is_caught_and_says_what_did_not_match() {
    let dir = Scratch::new();
    let server = Server::builder()
        .extension(Skills::from_dirs([&dir.0]).unwrap())
        .build()
        .unwrap();
    for version in ERAS {
        let client = in_process(&server, builder(version)).await;
        let entry = client.skills_get("skill://pdf/SKILL.md").await.unwrap();
        // Same length, other bytes: a digest mismatch.
        let forms = std::fs::read(dir.0.join("pdf/forms/FORMS.md")).unwrap();
        let mut evil = forms.clone();
        evil[0] = b'X';
        dir.write("pdf/forms/FORMS.md", &evil);
        let e = client
            .read_skill_file(&entry, "forms/FORMS.md")
            .await
            .unwrap_err();
        assert!(e.to_string().contains("digest mismatch"), "{e}");
        match problem(e) {
            VerificationProblem::Digest { expected, actual } => {
                assert_eq!(expected, skill_digest(&forms));
                assert_eq!(actual, skill_digest(&evil));
            }
            other => panic!("{other:?}"),
        }
        // Another length: a size mismatch (found before any digest).
        dir.write("pdf/logo.png", &[1, 2, 3]);
        let e = client
            .read_skill_file(&entry, "logo.png")
            .await
            .unwrap_err();
        assert_eq!(
            problem(e),
            VerificationProblem::Size {
                expected: PNG.len() as u64,
                actual: 3
            }
        );
        // A SKILL.md whose bytes match an entry but whose frontmatter does not.
        let tampered = SKILL_MD.replace("Fill PDFs", "Exfiltrate credentials");
        dir.write("pdf/SKILL.md", tampered.as_bytes());
        let mut forged = entry.clone();
        if let SkillResources::Files(files) = &mut forged.resources {
            files[0].digest = skill_digest(tampered.as_bytes());
            files[0].size = tampered.len() as u64;
        }
        let e = client.load_skill(&forged).await.unwrap_err();
        match problem(e) {
            VerificationProblem::FrontmatterField { field, entry, file } => {
                assert_eq!(field, "description");
                assert_eq!(entry, "\"Fill PDFs\"");
                assert_eq!(file, "\"Exfiltrate credentials\"");
            }
            other => panic!("{other:?}"),
        }
        // With the real entry the tampered SKILL.md fails on its size.
        let e = client.load_skill(&entry).await.unwrap_err();
        assert!(matches!(problem(e), VerificationProblem::Size { .. }));
        // An entry whose name is not its URI's last segment is not loaded.
        let mut renamed = entry.clone();
        renamed
            .frontmatter
            .insert("name".into(), Value::String("other".into()));
        let e = client.load_skill(&renamed).await.unwrap_err();
        assert!(matches!(problem(e), VerificationProblem::InvalidEntry(_)));
        // Restore for the next era.
        dir.write("pdf/SKILL.md", SKILL_MD.as_bytes());
        dir.write("pdf/forms/FORMS.md", &forms);
        dir.write("pdf/logo.png", PNG);
        client.close().await;
    }
}

#[tokio::test]
async fn the_cache_rechecks_the_digest_on_every_read() {
    let dir = Scratch::new();
    let server = Server::builder()
        .extension(Skills::from_dirs([&dir.0]).unwrap())
        .build()
        .unwrap();
    let client = in_process(&server, builder(ERAS[1])).await;
    let entry = client.skills_get("skill://pdf/SKILL.md").await.unwrap();
    let cache = SkillCache::new();
    let first = cache
        .read(&client, "docs", &entry, "forms/FORMS.md")
        .await
        .unwrap();
    assert_eq!(cache.len(), 1);
    // Served from the cache even when the server now has other bytes.
    dir.write("pdf/forms/FORMS.md", b"changed on the server, and longer\n");
    let again = cache
        .read(&client, "docs", &entry, "forms/FORMS.md")
        .await
        .unwrap();
    assert_eq!(first, again);
    // Another server label is another skill: not served from this entry's cache.
    let e = cache
        .read(&client, "other-server", &entry, "forms/FORMS.md")
        .await
        .unwrap_err();
    assert!(matches!(problem(e), VerificationProblem::Size { .. }));
    // A cached copy altered in place no longer verifies: dropped, fetched again,
    // and the fetch fails verification (the server changed too).
    cache.insert("docs", "skill://pdf/forms/FORMS.md", b"altered".to_vec());
    assert!(
        cache
            .get("docs", &entry, "skill://pdf/forms/FORMS.md")
            .is_none()
    );
    assert!(
        cache
            .read(&client, "docs", &entry, "forms/FORMS.md")
            .await
            .is_err()
    );
    cache.remove_server("docs");
    assert!(cache.is_empty());
    client.close().await;
}

#[tokio::test]
async fn servers_without_the_extension_are_not_asked() {
    let server = Server::builder().build().unwrap();
    let client = in_process(&server, builder(ERAS[0])).await;
    assert!(!client.supports_skills());
    assert!(matches!(
        client.skills_list().await.unwrap_err(),
        ClientError::Unsupported(_)
    ));
    assert!(matches!(
        client.read_directory("skill://x", None).await.unwrap_err(),
        ClientError::Unsupported(_)
    ));
    client.close().await;
}
