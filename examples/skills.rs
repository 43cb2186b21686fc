//! A server publishing skills, and a client loading one with verification.
//!
//! The Skills extension (`io.modelcontextprotocol/skills`) serves every
//! folder that holds a `SKILL.md` as `skill://` resources, with a manifest
//! listing each file's size and digest. A client fetches a skill's files and
//! checks them against that manifest before using them. A skill can also be
//! generated on each read ("dynamic"); it has no digests, only frontmatter.
//!
//! `cargo run -p tessera-examples --example skills [DIR]` serves DIR
//! (default: `examples/skills`, which ships one skill) and the generated
//! skill `calendar/today` to a client in this process. With `--stdio [DIR]`
//! it only serves: `tessera skills list --verify -- target/debug/examples/skills --stdio`.

use std::path::PathBuf;

use tessera::client::{Client, ClientError, VerificationProblem};
use tessera::server::skills::{DynamicSkill, SkillFile, Skills};
use tessera::server::{ResourceError, Server};
use tessera::types::JsonObject;

/// A generated skill: its `SKILL.md` is written on every read.
struct Today;

impl DynamicSkill for Today {
    // The entry's frontmatter; the generated SKILL.md must begin with the same.
    fn frontmatter(&self) -> JsonObject {
        let mut f = JsonObject::new();
        f.insert("name".into(), "today".into());
        f.insert("description".into(), "What day it is on the server".into());
        f
    }

    async fn files(&self) -> Result<Vec<SkillFile>, ResourceError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let text = format!(
            "---\nname: today\ndescription: What day it is on the server\n---\n\n\
             Day {} since 1970-01-01.\n",
            now / 86_400
        );
        Ok(vec![SkillFile::new("SKILL.md", text)])
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let serve_only = args.first().is_some_and(|a| a == "--stdio");
    if serve_only {
        args.remove(0);
    }
    let dir = args.first().map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("skills"),
        PathBuf::from,
    );

    // Loading checks every skill (names, frontmatter, limits) and computes
    // the digests; a bad skill is refused here, naming it.
    let skills = Skills::from_dirs([dir])?.dynamic("calendar/today", Today)?;
    let server = Server::builder().extension(skills).build()?;
    if serve_only {
        server.serve_stdio().await?;
        return Ok(());
    }

    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_io);
    let _serving = server.serve_io(sr, sw);
    let (cr, cw) = tokio::io::split(client_io);
    let client = Client::builder("skills-example", "1.0.0")
        .connect_io(cr, cw)
        .await?;

    // The entries: a URI, the frontmatter and the manifest of files.
    for skill in client.skills_list().await? {
        println!("{}: {}", skill.uri, skill.description());
    }

    // Load a skill: SKILL.md is fetched, then its size, digest and
    // frontmatter are checked against the entry.
    let entry = client.skills_get("skill://release-notes/SKILL.md").await?;
    let loaded = client.load_skill(&entry).await?;
    println!(
        "loaded {} ({} bytes, verified)",
        entry.name(),
        loaded.text.len()
    );
    // Other files are read relative to the skill's root, verified the same way.
    let template = client.read_skill_file(&entry, "template.md").await?;
    println!("template.md: {} bytes, verified", template.len());
    // A file the manifest does not list is refused without being fetched.
    match client.read_skill_file(&entry, "../secrets.txt").await {
        Err(ClientError::SkillVerification(v)) if v.problem == VerificationProblem::NotListed => {
            println!("../secrets.txt refused: {}", v.problem);
        }
        other => return Err(format!("expected a refusal, got {other:?}").into()),
    }

    // A dynamic skill loads too, but only its frontmatter can be checked.
    let today = client.skills_get("skill://calendar/today/SKILL.md").await?;
    let loaded = client.load_skill(&today).await?;
    println!(
        "generated: {}",
        loaded.text.lines().last().unwrap_or_default()
    );
    client.close().await;
    Ok(())
}
