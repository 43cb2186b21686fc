//! Interactive elicitation on a real terminal: `tessera call` runs inside a
//! pseudo-terminal (util-linux `script`, so stdin, stdout and stderr are all
//! the terminal), the test waits for each question to appear on the screen
//! and types the answer, as a user would. Both eras: a legacy server sends
//! `elicitation/create`; a 2026-07-28 one asks in an input-required result.
//! Every wait is bounded.

use std::io::{Read, Write};
use std::process::{ChildStdin, Command, Stdio};

use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};
use tessera_testkit::Running;

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");
const BOUND: Duration = Duration::from_secs(60);

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `tessera ARGS...` inside a pseudo-terminal: what it shows, and its keyboard.
struct Terminal {
    child: Running,
    keys: Option<ChildStdin>,
    screen_rx: Receiver<Vec<u8>>,
    screen: String,
    /// How much of the screen earlier waits consumed.
    seen: usize,
}

impl Terminal {
    fn start(args: &[&str]) -> Terminal {
        let line = std::iter::once(TESSERA)
            .chain(args.iter().copied())
            .map(sh_quote)
            .collect::<Vec<_>>()
            .join(" ");
        let mut child = Command::new("script")
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .env("TERM", "dumb")
            .env("SHELL", "/bin/sh")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("util-linux `script` runs (package bsdutils)");
        let mut out = child.stdout.take().expect("stdout");
        let (tx, screen_rx) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Terminal {
            keys: child.stdin.take(),
            child: Running(child),
            screen_rx,
            screen: String::new(),
            seen: 0,
        }
    }

    /// Waits (bounded) until `text` appears after what was already seen.
    fn wait_for(&mut self, text: &str) {
        let deadline = Instant::now() + BOUND;
        loop {
            if let Some(at) = self.screen[self.seen..].find(text) {
                self.seen += at + text.len();
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.screen_rx.recv_timeout(left) {
                Ok(bytes) => self
                    .screen
                    .push_str(&String::from_utf8_lossy(&bytes).replace('\r', "")),
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "{text:?} not shown within {BOUND:?}; screen:\n{}",
                        self.screen
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "the terminal closed before {text:?}; screen:\n{}",
                        self.screen
                    )
                }
            }
        }
    }

    /// Types a line.
    fn type_line(&mut self, line: &str) {
        let keys = self.keys.as_mut().expect("keyboard open");
        keys.write_all(format!("{line}\n").as_bytes())
            .and_then(|()| keys.flush())
            .expect("types");
    }

    /// Waits (bounded) for the program to end (the terminal closes): its
    /// exit code and the whole screen.
    fn finish(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + BOUND;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.screen_rx.recv_timeout(left) {
                Ok(bytes) => self
                    .screen
                    .push_str(&String::from_utf8_lossy(&bytes).replace('\r', "")),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "tessera did not end within {BOUND:?}; screen:\n{}",
                        self.screen
                    )
                }
            }
        }
        drop(self.keys.take());
        let status = self.child.wait().expect("waits");
        (status.code(), std::mem::take(&mut self.screen))
    }
}

fn call_elicitation(era: &str) -> Terminal {
    Terminal::start(&[
        "call",
        "test_elicitation",
        r#"{"message":"Who are you?"}"#,
        "--era",
        era,
        "--",
        TESSERA,
        "serve",
        "--stdio",
    ])
}

#[test]
fn a_form_is_filled_in_on_a_terminal_in_both_eras() {
    for era in ["legacy", "modern"] {
        let mut t = call_elicitation(era);
        t.wait_for("The server asks: Who are you?");
        t.wait_for("Answer it? [y]es, [n]o (decline), [c]ancel: ");
        t.type_line("y");
        // The properties are asked in order; a required one is asked again
        // when left empty.
        t.wait_for("email (string, required) — User's email address");
        t.wait_for("> ");
        t.type_line("");
        t.wait_for("an answer is required");
        t.wait_for("> ");
        t.type_line("ada@example.com");
        t.wait_for("username (string, required) — User's response");
        t.wait_for("> ");
        t.type_line("ada");
        let (code, screen) = t.finish();
        assert_eq!(code, Some(0), "{era}: screen:\n{screen}");
        assert!(
            screen.contains(
                r#"User response: action=accept, content={"email":"ada@example.com","username":"ada"}"#
            ),
            "{era}: screen:\n{screen}"
        );
    }
}

#[test]
fn a_form_is_declined_on_a_terminal() {
    let mut t = call_elicitation("legacy");
    t.wait_for("Answer it? [y]es, [n]o (decline), [c]ancel: ");
    t.type_line("n");
    let (code, screen) = t.finish();
    assert_eq!(code, Some(0), "screen:\n{screen}");
    assert!(
        screen.contains("User response: action=decline, content=null"),
        "screen:\n{screen}"
    );
    assert!(
        !screen.contains("email (string"),
        "no question after a decline:\n{screen}"
    );
}
