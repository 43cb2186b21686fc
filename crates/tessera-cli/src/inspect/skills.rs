//! The Skills tab's server side: a server's skills (the Skills extension)
//! and the verification verdict of each file — the entry's `SKILL.md`
//! (digest, size, frontmatter) and every other file of the manifest
//! (digest, size) — as `tessera skills list --verify` computes it.

use serde_json::{Value, json};
use tessera::client::{Client, ClientError};
use tessera::types::SkillResources;

use super::problem::Problem;

fn problem(e: &ClientError, doing: &str) -> Problem {
    Problem::client(e, doing)
}

/// `{skills}`: every skill the server lists.
pub async fn list(client: &Client) -> Result<Value, Problem> {
    let skills = client
        .skills_list()
        .await
        .map_err(|e| problem(&e, "listing skills"))?;
    Ok(json!({ "skills": skills }))
}

/// `{uri, dynamic, files: [{uri, digest, size, verdict, detail?}]}`: each
/// file of skill `uri` read and checked against its manifest entry.
pub async fn verify(client: &Client, uri: &str) -> Result<Value, Problem> {
    let skill = client
        .skills_get(uri)
        .await
        .map_err(|e| problem(&e, "getting the skill"))?;
    let SkillResources::Files(files) = &skill.resources else {
        return Ok(json!({"uri": uri, "dynamic": true, "files": []}));
    };
    let mut verdicts = Vec::with_capacity(files.len());
    for f in files {
        let checked = if f.uri == skill.uri {
            client.load_skill(&skill).await.map(|_| ())
        } else {
            client.read_skill_file(&skill, &f.uri).await.map(|_| ())
        };
        let mut v = json!({"uri": f.uri, "digest": f.digest, "size": f.size});
        match checked {
            Ok(()) => v["verdict"] = json!("ok"),
            Err(ClientError::SkillVerification(e)) => {
                v["verdict"] = json!("failed");
                v["detail"] = json!(e.to_string());
            }
            Err(e) => {
                v["verdict"] = json!("unreadable");
                v["detail"] = json!(e.to_string());
            }
        }
        verdicts.push(v);
    }
    Ok(json!({"uri": uri, "dynamic": false, "files": verdicts}))
}
