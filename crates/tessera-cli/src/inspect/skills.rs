//! The Skills tab's server side: a server's skills (the Skills extension)
//! and the verification verdict of each file — the entry's `SKILL.md`
//! (digest, size, frontmatter) and every other file of the manifest
//! (digest, size) — as `tessera skills list --verify` computes it.

use serde::Serialize;
use tessera::client::{Client, ClientError};
use tessera::types::SkillResources;

use super::forward::{Answer, reply};
use super::problem::Problem;

/// The answer of `GET …/skills`.
#[derive(Serialize)]
struct Listed<S> {
    skills: S,
}

/// The answer of `POST …/skills/verify`.
#[derive(Serialize)]
struct Verified<'a> {
    uri: &'a str,
    dynamic: bool,
    files: Vec<FileVerdict<'a>>,
}

/// One file of a skill, checked.
#[derive(Serialize)]
struct FileVerdict<'a> {
    uri: &'a str,
    digest: &'a str,
    size: u64,
    verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

fn problem(e: &ClientError, doing: &str) -> Problem {
    Problem::client(e, doing)
}

/// `{skills}`: every skill the server lists.
pub async fn list(client: &Client) -> Answer {
    let skills = client
        .skills_list()
        .await
        .map_err(|e| problem(&e, "listing skills"))?;
    reply(Listed { skills })
}

/// `{uri, dynamic, files: [{uri, digest, size, verdict, detail?}]}`: each
/// file of skill `uri` read and checked against its manifest entry.
pub async fn verify(client: &Client, uri: &str) -> Answer {
    let skill = client
        .skills_get(uri)
        .await
        .map_err(|e| problem(&e, "getting the skill"))?;
    let SkillResources::Files(files) = &skill.resources else {
        return reply(Verified {
            uri,
            dynamic: true,
            files: Vec::new(),
        });
    };
    let mut verdicts = Vec::with_capacity(files.len());
    for f in files {
        let checked = if f.uri == skill.uri {
            client.load_skill(&skill).await.map(|_| ())
        } else {
            client.read_skill_file(&skill, &f.uri).await.map(|_| ())
        };
        let (verdict, detail) = match checked {
            Ok(()) => ("ok", None),
            Err(ClientError::SkillVerification(e)) => ("failed", Some(e.to_string())),
            Err(e) => ("unreadable", Some(e.to_string())),
        };
        verdicts.push(FileVerdict {
            uri: &f.uri,
            digest: &f.digest,
            size: f.size,
            verdict,
            detail,
        });
    }
    reply(Verified {
        uri,
        dynamic: false,
        files: verdicts,
    })
}
