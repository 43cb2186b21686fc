//! The exit codes of `tessera`, one meaning each, and [`Failure`]: how a
//! command failed.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the server answered with a JSON-RPC error |
//! | 2 | usage: bad arguments, a bad config file or server name |
//! | 3 | cannot connect, or the connection broke |
//! | 4 | authorization needed or refused (HTTP 401/403, `tessera login` needed) |
//! | 5 | the tool ran and reported an error (`isError: true`) |
//! | 6 | no answer within `--timeout` |
//! | 7 | the server broke the protocol (an answer of the wrong shape, a skill file that does not match its entry) |
//! | 8 | the server needed input (elicitation, sampling) that was refused or could not be given |
//! | 9 | the server does not offer what was asked (a capability it did not declare, or the era or protocol version pinned with `--era`/`--protocol-version`) |
//! | 10 | `tessera bench`: some requests failed |
//! | 11 | a local failure (cannot start the runtime, bind a port, write a file) |
//! | 130 | interrupted (Ctrl-C; `call --task` cancels the task first) |

use std::process::ExitCode;

use tessera::client::ClientError;
use tessera_http::TransportFailure;

use crate::peer_text;

/// An exit code of `tessera`. Each code has exactly one meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Exit {
    /// 0: the command did what was asked.
    Success = 0,
    /// 1: the server answered with a JSON-RPC error.
    ServerError = 1,
    /// 2: bad command-line arguments, config file or server name.
    Usage = 2,
    /// 3: cannot connect to the server, or the connection broke.
    Connection = 3,
    /// 4: authorization needed or refused.
    Auth = 4,
    /// 5: the tool ran and reported an error (`isError: true`).
    ToolError = 5,
    /// 6: no answer within the timeout.
    Timeout = 6,
    /// 7: the server's answer broke the protocol.
    Protocol = 7,
    /// 8: the server needed input that was refused or could not be given.
    InputRefused = 8,
    /// 9: the server does not offer what was asked (a capability, or the
    /// pinned era or protocol version).
    Unsupported = 9,
    /// 10: `tessera bench` finished but some requests failed.
    BenchErrors = 10,
    /// 11: a local failure (runtime, I/O, a port that cannot be bound).
    Local = 11,
    /// 12: `tessera replay` finished but some answers differ from the
    /// recorded ones.
    ReplayDiffers = 12,
    /// 130: interrupted by the user (Ctrl-C), as shells report SIGINT.
    Interrupted = 130,
}

impl Exit {
    /// Every code, in order (for the help text and tests).
    pub const ALL: [Exit; 14] = [
        Exit::Success,
        Exit::ServerError,
        Exit::Usage,
        Exit::Connection,
        Exit::Auth,
        Exit::ToolError,
        Exit::Timeout,
        Exit::Protocol,
        Exit::InputRefused,
        Exit::Unsupported,
        Exit::BenchErrors,
        Exit::Local,
        Exit::ReplayDiffers,
        Exit::Interrupted,
    ];

    /// The numeric code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// What the code means, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Success => "success",
            Exit::ServerError => "the server answered with a JSON-RPC error",
            Exit::Usage => "usage: bad arguments, config file or server name",
            Exit::Connection => "cannot connect, or the connection broke",
            Exit::Auth => "authorization needed or refused (try `tessera login URL`)",
            Exit::ToolError => "the tool reported an error (isError)",
            Exit::Timeout => "no answer within --timeout",
            Exit::Protocol => {
                "the server's answer broke the protocol (a wrong shape, over the 16 MiB message limit)"
            }
            Exit::InputRefused => "the server needed input that was refused or unavailable",
            Exit::Unsupported => {
                "the server does not offer what was asked (a capability, the pinned era or version)"
            }
            Exit::BenchErrors => "tessera bench: some requests failed",
            Exit::Local => "a local failure (runtime, I/O, binding a port)",
            Exit::ReplayDiffers => "tessera replay: some answers differ from the recorded ones",
            Exit::Interrupted => "interrupted (Ctrl-C)",
        }
    }

    /// The table printed at the end of `--help`.
    pub fn help_table() -> String {
        let mut s = String::from("Exit codes:\n");
        for e in Exit::ALL {
            s.push_str(&format!("  {:>3}  {}\n", e.code(), e.meaning()));
        }
        s
    }

    /// The exit code for a client error: the server's JSON-RPC error (1),
    /// an HTTP 401/403 (4), a lost connection (3), a timeout (6)…
    pub fn of_client_error(e: &ClientError) -> Exit {
        if e.is_timeout() {
            return Exit::Timeout;
        }
        // An answer over the message size limit breaks what the protocol
        // allows here.
        if e.is_too_large() {
            return Exit::Protocol;
        }
        if e.is_closed() {
            return Exit::Connection;
        }
        if let Some(remote) = e.remote() {
            return match TransportFailure::of(remote) {
                Some(f) if f.is_auth() => Exit::Auth,
                Some(_) => Exit::Connection,
                None if matches!(e, ClientError::UrlElicitationRequired { .. }) => {
                    Exit::InputRefused
                }
                None => Exit::ServerError,
            };
        }
        match e {
            ClientError::Io(_) | ClientError::Connect(_) => Exit::Connection,
            ClientError::Decode { .. }
            | ClientError::SkillVerification(_)
            | ClientError::Protocol { .. }
            | ClientError::TooManyRounds { .. }
            | ClientError::CursorLoop { .. }
            | ClientError::TooManyPages { .. } => Exit::Protocol,
            ClientError::UndeclaredInput { .. } | ClientError::Input { .. } => Exit::InputRefused,
            ClientError::Unsupported(_) => Exit::Unsupported,
            ClientError::Config(_) => Exit::Usage,
            _ => Exit::Connection,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

/// How a command failed, and so which exit code it gets.
#[derive(Debug)]
pub enum Failure {
    /// Bad command-line arguments (exit 2).
    Usage(String),
    /// A failure without a more precise code: a client error found in the
    /// chain is classified ([`Exit::of_client_error`]), anything else is a
    /// local failure (exit 11).
    Runtime(anyhow::Error),
    /// A failure with its exit code.
    Coded(Exit, anyhow::Error),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Runtime(e)
    }
}

impl Failure {
    /// A client error, with its exit code and what was being done.
    pub fn client(e: ClientError, doing: impl std::fmt::Display) -> Failure {
        let code = Exit::of_client_error(&e);
        let e = match e.remote() {
            Some(r) if code == Exit::ServerError => {
                let mut text = format!("server error {}: {}", r.code, r.message);
                if let Some(d) = &r.data {
                    text.push_str(&format!(" (data: {d})"));
                }
                anyhow::anyhow!(text)
            }
            _ => anyhow::Error::new(e),
        };
        Failure::Coded(code, e.context(doing.to_string()))
    }

    /// The exit code.
    pub fn exit(&self) -> Exit {
        match self {
            Failure::Usage(_) => Exit::Usage,
            Failure::Coded(c, _) => *c,
            Failure::Runtime(e) => e
                .chain()
                .find_map(|c| c.downcast_ref::<ClientError>())
                .map(Exit::of_client_error)
                .unwrap_or(Exit::Local),
        }
    }

    /// Prints the failure to stderr (one line, with its causes) and gives
    /// the exit code.
    pub fn report(self) -> ExitCode {
        let exit = self.exit();
        match self {
            // The message may carry a server's text (an error message, a
            // name): its control characters are shown as escapes.
            Failure::Usage(msg) => peer_text::eprintln(&msg),
            Failure::Runtime(e) | Failure::Coded(_, e) => {
                peer_text::eprintln(&format!("error: {e:#}"))
            }
        }
        exit.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera::types::ErrorObject;

    #[test]
    fn codes_are_distinct_and_in_order() {
        let codes: std::collections::HashSet<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
        assert_eq!(codes.len(), Exit::ALL.len());
        for (i, e) in Exit::ALL.iter().take(13).enumerate() {
            assert_eq!(e.code() as usize, i);
        }
        let t = Exit::help_table();
        assert!(t.contains("  5  the tool reported an error"));
    }

    #[test]
    fn classifies_client_errors() {
        use tessera::client::ClientError as E;
        let remote = |o: ErrorObject| {
            E::Request(tessera::runtime::PeerError::Call(
                tessera::proto::CallError::Remote(o),
            ))
        };
        assert_eq!(
            Exit::of_client_error(&remote(ErrorObject::new(-32602, "bad"))),
            Exit::ServerError
        );
        let mut o = ErrorObject::internal("HTTP 401 Unauthorized from the server");
        o.data = Some(serde_json::json!({tessera_http::TRANSPORT_FAILURE_KEY: {"status": 401}}));
        assert_eq!(Exit::of_client_error(&remote(o)), Exit::Auth);
        let mut o = ErrorObject::internal("HTTP request failed: refused");
        o.data = Some(serde_json::json!({tessera_http::TRANSPORT_FAILURE_KEY: {"status": null}}));
        assert_eq!(Exit::of_client_error(&remote(o)), Exit::Connection);
        assert_eq!(
            Exit::of_client_error(&E::Request(tessera::runtime::PeerError::Closed)),
            Exit::Connection
        );
        assert_eq!(
            Exit::of_client_error(&E::Request(tessera::runtime::PeerError::Call(
                tessera::proto::CallError::Timeout(std::time::Duration::from_secs(1))
            ))),
            Exit::Timeout
        );
        assert_eq!(
            Exit::of_client_error(&E::Unsupported("logging".into())),
            Exit::Unsupported
        );
    }
}
