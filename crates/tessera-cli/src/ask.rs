//! What the server asks of the user or the model while a verb runs:
//! form-mode elicitation (a form on the terminal, [`crate::form`]), URL-mode
//! elicitation (the URL is shown and consent asked; `tessera` never opens
//! it), and sampling (refused unless `--sampling-command CMD` answers it).
//! Without a terminal on stdin, or with `--no-input`, elicitations are
//! refused with a message saying why. A 2025-11-25 server may send either as
//! a task (the client is a task receiver).

use std::io::IsTerminal as _;
use std::sync::Arc;
use std::time::Duration;

use tessera::client::{ClientBuilder, FormRequest, UrlRequest, user_rejected};
use tessera::types::{CreateMessageRequestParams, CreateMessageResult, ElicitAction, ErrorObject};

use crate::connect::ClientOptions;
use crate::notices::Notices;
use crate::peer_text;

/// The code of a refusal by this client (no user to ask, no model).
const REFUSED: i64 = -1;

/// Whether the user can be asked: stdin is a terminal and `--no-input`
/// was not given.
fn can_ask(no_input: bool) -> Result<(), String> {
    if no_input {
        return Err("--no-input was given".into());
    }
    if !std::io::stdin().is_terminal() {
        return Err("stdin is not a terminal".into());
    }
    Ok(())
}

/// Installs the elicitation and sampling handlers on the builder.
pub fn install(b: ClientBuilder, opts: &ClientOptions, notices: &Notices) -> ClientBuilder {
    // One question on the terminal at a time.
    let turn = Arc::new(tokio::sync::Mutex::new(()));
    let no_input = opts.no_input;
    let (n1, t1) = (notices.clone(), turn.clone());
    let b = b.elicitation(move |form: FormRequest| {
        let (notices, turn) = (n1.clone(), t1.clone());
        async move {
            if let Err(why) = can_ask(no_input) {
                eprintln!(
                    "tessera: the server asks: {}\n  refused: {why}, so the user cannot be asked",
                    peer_text::block(&form.message)
                );
                return Err(ErrorObject::new(
                    REFUSED,
                    format!("the user cannot be asked ({why})"),
                ));
            }
            let _turn = turn.lock().await;
            notices.finish();
            let (message, schema) = (form.message.clone(), form.raw_schema.clone());
            tokio::task::spawn_blocking(move || {
                let stdin = std::io::stdin();
                let mut input = stdin.lock();
                crate::form::ask(&message, &schema, &mut input, &mut std::io::stderr())
            })
            .await
            .map_err(|e| ErrorObject::internal(format!("asking the user failed: {e}")))?
            .map_err(|e| ErrorObject::internal(format!("asking the user failed: {e}")))
        }
    });
    let (n2, t2) = (notices.clone(), turn);
    let b = b.url_elicitation(move |req: UrlRequest| {
        let (notices, turn) = (n2.clone(), t2.clone());
        async move {
            let shown = describe_url(&req);
            if let Err(why) = can_ask(no_input) {
                eprintln!("{shown}  refused: {why}, so the user cannot consent");
                return Err(ErrorObject::new(
                    REFUSED,
                    format!("the user cannot be asked ({why})"),
                ));
            }
            let _turn = turn.lock().await;
            notices.finish();
            let url = req.url.clone();
            let answer = tokio::task::spawn_blocking(move || {
                eprint!("{shown}Open it? [y/N]: ");
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).map(|_| line)
            })
            .await
            .map_err(|e| ErrorObject::internal(format!("asking the user failed: {e}")))?
            .map_err(|e| ErrorObject::internal(format!("asking the user failed: {e}")))?;
            Ok(match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => {
                    eprintln!("Open this URL in your browser: {}", peer_text::line(&url));
                    ElicitAction::Accept
                }
                "" | "n" | "no" => ElicitAction::Decline,
                _ => ElicitAction::Cancel,
            })
        }
    });
    let command = opts.sampling_command.clone();
    let timeout = opts.timeout;
    b.sampling(move |req: CreateMessageRequestParams| {
        let command = command.clone();
        async move {
            match command {
                None => {
                    eprintln!(
                        "tessera: the server asked for a sampling (LLM) request; refused: no --sampling-command was given"
                    );
                    Err(user_rejected(
                        "sampling is not available: the client was run without --sampling-command",
                    ))
                }
                Some(cmd) => crate::sampling::run(&cmd, &req, timeout).await,
            }
        }
    })
    // A 2025-11-25 server may send both as tasks: the question (or the
    // sampling command) then runs while the server polls, for as long as
    // the verb runs.
    .receive_tasks()
}

/// The URL request as shown to the user: message, full URL, host, and a
/// warning when the URL looks suspicious.
pub fn describe_url(req: &UrlRequest) -> String {
    let mut s = format!(
        "\nThe server asks you to open a URL: {}\n  URL:  {}\n",
        peer_text::block(&req.message),
        peer_text::line(&req.url)
    );
    if let Some(h) = req.host() {
        s.push_str(&format!("  host: {}\n", peer_text::line(h)));
    }
    if req.looks_suspicious() {
        s.push_str(
            "  warning: this URL is not https, or its host uses Punycode, non-ASCII characters or embedded credentials\n",
        );
    }
    s
}

/// A timeout for commands that answer requests (`0` = none).
pub fn bounded(t: Duration) -> Option<Duration> {
    (!t.is_zero()).then_some(t)
}

/// A sampling result for a plain-text reply.
pub fn text_reply(text: &str) -> CreateMessageResult {
    let mut r = CreateMessageResult::text("sampling-command", text.trim_end_matches('\n'));
    r.stop_reason = Some("endTurn".into());
    r
}
