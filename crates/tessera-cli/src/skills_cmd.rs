//! `tessera skills`: the skills a server publishes (Skills extension),
//! listed, described and read, every file checked against its entry.

use std::ffi::OsString;
use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use tessera::client::{Client, ClientError};
use tessera::types::{Skill, SkillResources};

use crate::connect::{connect, remote_failure};
use crate::http_opts::HttpOptions;
use crate::peer_text;
use crate::target::Target;
use crate::{Exit, Failure};

/// `tessera skills`.
#[derive(Debug, Args)]
pub struct SkillsArgs {
    #[command(subcommand)]
    verb: SkillsVerb,
}

#[derive(Debug, Subcommand)]
enum SkillsVerb {
    /// List the skills (names, descriptions, files); --verify also fetches
    /// and checks every file of every listed skill.
    List {
        /// Fetch every file of every listed skill and check it against the
        /// entry (size, digest, SKILL.md frontmatter); exit 7 on any mismatch.
        #[arg(long)]
        verify: bool,
        /// Print the entries as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Print the entry of one skill (skills/get) as JSON.
    Get {
        /// The URI of the skill's SKILL.md.
        #[arg(value_name = "SKILL_URI")]
        uri: String,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Print a file of a skill (SKILL.md by default) after checking it
    /// against the skill's entry; nothing is printed when it does not match.
    Read {
        /// The URI of the skill's SKILL.md, then optionally the file (a path
        /// relative to the skill's root, or its URI), then an http(s) URL.
        #[arg(value_name = "SKILL_URI [FILE] [URL]", required = true, num_args = 1..=3)]
        positional: Vec<String>,
        /// The stdio server to start.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<OsString>,
        #[command(flatten)]
        http: HttpOptions,
    },
}

/// The server: an http(s) URL, or `-- COMMAND ARGS...`.
#[derive(Debug, Args)]
struct TargetArgs {
    /// An http(s) URL.
    #[arg(value_name = "URL")]
    positional: Vec<String>,
    /// The stdio server to start.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
    #[command(flatten)]
    http: HttpOptions,
}

impl TargetArgs {
    async fn connect(self) -> Result<Client, Failure> {
        let mut positional = self.positional;
        let target = Target::resolve(&mut positional, self.command)?;
        if let Some(extra) = positional.first() {
            return Err(Failure::Usage(format!("unexpected argument {extra:?}")));
        }
        connect(target, &self.http).await
    }
}

/// Runs `tessera skills`.
pub async fn run(a: SkillsArgs) -> Result<ExitCode, Failure> {
    match a.verb {
        SkillsVerb::List {
            verify,
            json,
            target,
        } => {
            let client = target.connect().await?;
            let outcome = list(&client, verify, json).await;
            client.close().await;
            outcome
        }
        SkillsVerb::Get { uri, target } => {
            let client = target.connect().await?;
            let outcome = client.skills_get(&uri).await;
            client.close().await;
            let skill = outcome.map_err(skills_failure)?;
            let text = serde_json::to_string_pretty(&skill).context("serialising")?;
            println!("{}", peer_text::json(&text));
            Ok(ExitCode::SUCCESS)
        }
        SkillsVerb::Read {
            mut positional,
            command,
            http,
        } => {
            let target = Target::resolve(&mut positional, command)?;
            let mut words = positional.into_iter();
            let uri = words
                .next()
                .ok_or_else(|| Failure::Usage("missing SKILL_URI".into()))?;
            let file = words.next();
            let client = connect(target, &http).await?;
            let outcome = read(&client, &uri, file.as_deref()).await;
            client.close().await;
            let bytes = outcome?;
            let mut out = std::io::stdout().lock();
            // The verified bytes go to a file or pipe exactly; a terminal
            // gets them as text with control characters shown as escapes.
            if out.is_terminal() {
                let text = String::from_utf8_lossy(&bytes);
                out.write_all(peer_text::block(&text).as_bytes())
                    .context("writing to stdout")?;
            } else {
                out.write_all(&bytes).context("writing to stdout")?;
            }
            out.flush().context("writing to stdout")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Verification failures and missing support get their own message.
fn skills_failure(e: ClientError) -> Failure {
    match e {
        ClientError::SkillVerification(v) => {
            Failure::Coded(Exit::Protocol, anyhow::anyhow!("verification failed: {v}"))
        }
        ClientError::Unsupported(what) => Failure::Coded(
            Exit::Unsupported,
            anyhow::anyhow!("the server does not offer {what} (it did not declare the extension)"),
        ),
        other => remote_failure(other),
    }
}

async fn read(client: &Client, uri: &str, file: Option<&str>) -> Result<Vec<u8>, Failure> {
    let skill = client.skills_get(uri).await.map_err(skills_failure)?;
    if skill.resources == SkillResources::Dynamic {
        return Err(Failure::Coded(
            Exit::Unsupported,
            anyhow::anyhow!(
                "{uri} is a dynamic skill: its entry has no digests, so its content cannot be \
             verified and is not printed"
            ),
        ));
    }
    match file {
        None | Some("SKILL.md") => Ok(client
            .load_skill(&skill)
            .await
            .map_err(skills_failure)?
            .text
            .into_bytes()),
        Some(f) => client
            .read_skill_file(&skill, f)
            .await
            .map_err(skills_failure),
    }
}

fn files_of(skill: &Skill) -> String {
    match &skill.resources {
        SkillResources::Files(f) => {
            let bytes: u64 = f.iter().map(|r| r.size).sum();
            format!("{} files, {bytes} bytes", f.len())
        }
        SkillResources::Dynamic => "dynamic".into(),
    }
}

/// Loads a skill and reads each of its files, all checked.
async fn verify_skill(client: &Client, skill: &Skill) -> Result<usize, ClientError> {
    client.load_skill(skill).await?;
    let SkillResources::Files(files) = &skill.resources else {
        return Ok(0);
    };
    for f in files.iter().filter(|f| f.uri != skill.uri) {
        client.read_skill_file(skill, &f.uri).await?;
    }
    Ok(files.len())
}

async fn list(client: &Client, verify: bool, json: bool) -> Result<ExitCode, Failure> {
    let skills = client.skills_list().await.map_err(skills_failure)?;
    if json {
        /// The `--json` document.
        #[derive(serde::Serialize)]
        struct Listed<'a, S> {
            skills: &'a S,
        }
        // Through a `Value`: members in name order, as always written.
        let v = serde_json::to_value(Listed { skills: &skills }).context("serialising")?;
        let text = serde_json::to_string_pretty(&v).context("serialising")?;
        println!("{}", peer_text::json(&text));
    } else if skills.is_empty() {
        println!("(no skills listed)");
    } else {
        let uris: Vec<String> = skills
            .iter()
            .map(|s| peer_text::line(&s.uri).into_owned())
            .collect();
        let width = uris.iter().map(|u| u.chars().count()).max().unwrap_or(0);
        for (s, uri) in skills.iter().zip(&uris) {
            println!(
                "{uri:width$}  {}  ({})",
                peer_text::line(s.description().lines().next().unwrap_or("")),
                files_of(s)
            );
        }
    }
    if !verify {
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = 0;
    for s in &skills {
        if s.resources == SkillResources::Dynamic {
            eprintln!(
                "skip    {}: dynamic, nothing to verify against",
                peer_text::line(&s.uri)
            );
            continue;
        }
        match verify_skill(client, s).await {
            Ok(n) => eprintln!("ok      {} ({n} files verified)", peer_text::line(&s.uri)),
            Err(ClientError::SkillVerification(v)) => {
                failed += 1;
                eprintln!("FAILED  {}", peer_text::line(&v.to_string()));
            }
            Err(e) => {
                failed += 1;
                eprintln!("FAILED  {}", peer_text::line(&format!("{}: {e}", s.uri)));
            }
        }
    }
    if failed > 0 {
        eprintln!("{failed} of {} skills failed verification", skills.len());
        return Ok(Exit::Protocol.into());
    }
    Ok(ExitCode::SUCCESS)
}
