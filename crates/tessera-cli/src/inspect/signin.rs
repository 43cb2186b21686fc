//! OAuth sign-in from the page: `POST /api/login {url, scope?}` runs the
//! authorization code flow of `tessera login` (the same code, the same token
//! file, so the CLI's verbs and the inspector's connections use the token it
//! leaves) in the background. Its steps come as `login` events: `authorize`
//! with the URL the user opens, then `signedIn` or `failed`; each HTTP
//! exchange of the flow as an `http` event labelled with the sign-in and its
//! phase (the OAuth debugger, `oauth_debug`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::State;
use serde::{Deserialize, Serialize};

use super::forward::{Answer, reply};
use super::hub::Hub;
use super::journal::Journal;
use super::problem::{Body, Problem};
use crate::login::{SignIn, default_token_file, sign_in};

/// The most sign-ins waiting for a browser at once.
pub const MAX_SIGN_INS: usize = 2;
/// How long a sign-in waits for the browser to come back.
const WAIT: Duration = Duration::from_secs(300);
/// The longest scope string accepted.
const MAX_SCOPE: usize = 1024;

/// The sign-ins in progress. Cheap to clone.
#[derive(Clone, Default)]
pub struct SignIns {
    running: Arc<AtomicUsize>,
    next: Arc<AtomicU64>,
}

/// Gives the slot back when the sign-in ends, however it ends.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `POST /api/login`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoginBody {
    /// The MCP server.
    url: String,
    /// Scopes to request instead of the server's.
    #[serde(default)]
    scope: Option<String>,
}

/// `POST /api/login`: starts a sign-in; `{login, tokenFile}`.
pub async fn start(State(hub): State<Hub>, Body(body): Body<LoginBody>) -> Answer {
    if !(body.url.starts_with("http://") || body.url.starts_with("https://")) {
        return Err(Problem::bad_request(format!(
            "url {:?}: expected an http:// or https:// URL",
            body.url
        )));
    }
    if body.scope.as_ref().is_some_and(|s| s.len() > MAX_SCOPE) {
        return Err(Problem::bad_request(format!(
            "scope: at most {MAX_SCOPE} bytes"
        )));
    }
    let token_file = default_token_file()
        .ok_or_else(|| Problem::bad_request("no token file: set $TESSERA_TOKEN_FILE (or $HOME)"))?;
    let sign_ins = hub.sign_ins();
    if sign_ins.running.fetch_add(1, Ordering::AcqRel) >= MAX_SIGN_INS {
        sign_ins.running.fetch_sub(1, Ordering::AcqRel);
        return Err(Problem::limit(format!(
            "{MAX_SIGN_INS} sign-ins are waiting for a browser already"
        )));
    }
    let slot = Slot(sign_ins.running.clone());
    let id = sign_ins.next.fetch_add(1, Ordering::Relaxed) + 1;
    let journal = hub.journal().clone();
    let shown = token_file.display().to_string();
    let url = body.url.clone();
    journal.record(
        "login",
        LoginEvent {
            token_file: Some(&shown),
            ..LoginEvent::new(id, &url, "started")
        },
    );
    tokio::spawn(run(id, url, body.scope, token_file, journal, slot));
    reply(Started {
        login: id,
        token_file: shown,
    })
}

/// The answer of `POST /api/login`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Started {
    login: u64,
    token_file: String,
}

/// A `login` event: a step of sign-in `login`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoginEvent<'a> {
    login: u64,
    server: &'a str,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    token_file: Option<&'a str>,
    /// The authorization URL the user opens.
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    /// The rules of the authorization request.
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<Vec<super::oauth_debug::Rule>>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    signed_in: Option<SignedIn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl<'a> LoginEvent<'a> {
    fn new(login: u64, server: &'a str, state: &'static str) -> Self {
        LoginEvent {
            login,
            server,
            state,
            token_file: None,
            url: None,
            checks: None,
            signed_in: None,
            error: None,
        }
    }
}

/// What a finished sign-in reports.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SignedIn {
    tools: usize,
    stored: bool,
    dpop: bool,
    expires_at: Option<u64>,
}

async fn run(
    id: u64,
    url: String,
    scope: Option<String>,
    token_file: std::path::PathBuf,
    journal: Journal,
    _slot: Slot,
) {
    let told = journal.clone();
    let server = url.clone();
    let steps = Arc::new(super::oauth_debug::Steps {
        journal: journal.clone(),
        login: id,
        bodies: Default::default(),
    });
    let flow = sign_in(
        SignIn {
            url: url.clone(),
            token_file,
            port: 0,
            open: false,
            timeout: WAIT,
            scope,
            client: None,
            no_dpop: false,
            require_dpop: false,
            observer: Some(steps.clone()),
            first_call: Some(steps),
        },
        move |authorize| {
            told.record(
                "login",
                LoginEvent {
                    url: Some(authorize),
                    checks: Some(super::oauth_debug::authorize_checks(authorize)),
                    ..LoginEvent::new(id, &server, "authorize")
                },
            );
        },
    );
    // The flow's own wait is WAIT; this bounds discovery and the token request too.
    let outcome = match tokio::time::timeout(WAIT + Duration::from_secs(60), flow).await {
        Ok(r) => r,
        Err(_) => Err(anyhow::anyhow!(
            "no answer within {:?}",
            WAIT + Duration::from_secs(60)
        )),
    };
    let event = match outcome {
        Ok(done) => LoginEvent {
            signed_in: Some(SignedIn {
                tools: done.tools,
                stored: done.stored.is_some(),
                dpop: done.stored.is_some_and(|(d, _)| d),
                expires_at: done.stored.and_then(|(_, e)| e),
            }),
            ..LoginEvent::new(id, &url, "signedIn")
        },
        Err(e) => LoginEvent {
            error: Some(format!("{e:#}")),
            ..LoginEvent::new(id, &url, "failed")
        },
    };
    journal.record("login", event);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_keep_their_shape() {
        let v = |e: LoginEvent<'_>| serde_json::to_value(e).unwrap();
        assert_eq!(
            v(LoginEvent {
                token_file: Some("/t"),
                ..LoginEvent::new(1, "http://x", "started")
            }),
            json!({"login": 1, "server": "http://x", "state": "started", "tokenFile": "/t"})
        );
        assert_eq!(
            v(LoginEvent {
                url: Some("http://as/a"),
                checks: Some(Vec::new()),
                ..LoginEvent::new(1, "http://x", "authorize")
            }),
            json!({"login": 1, "server": "http://x", "state": "authorize", "url": "http://as/a", "checks": []})
        );
        assert_eq!(
            v(LoginEvent {
                signed_in: Some(SignedIn {
                    tools: 2,
                    stored: true,
                    dpop: false,
                    expires_at: None
                }),
                ..LoginEvent::new(1, "http://x", "signedIn")
            }),
            json!({"login": 1, "server": "http://x", "state": "signedIn", "tools": 2,
                   "stored": true, "dpop": false, "expiresAt": null})
        );
        assert_eq!(
            v(LoginEvent {
                error: Some("no".into()),
                ..LoginEvent::new(1, "http://x", "failed")
            }),
            json!({"login": 1, "server": "http://x", "state": "failed", "error": "no"})
        );
        assert_eq!(
            serde_json::to_value(Started {
                login: 1,
                token_file: "/t".into()
            })
            .unwrap(),
            json!({"login": 1, "tokenFile": "/t"})
        );
    }
}
