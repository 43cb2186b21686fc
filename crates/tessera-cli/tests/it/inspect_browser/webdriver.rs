//! A small W3C WebDriver client over reqwest, and the `chromedriver` it
//! drives: just what the inspector's browser tests use.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// The element key of the W3C protocol.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How often an action finds its element again after the page replaced it.
/// The page keeps unchanged nodes across re-renders, so more than one
/// replacement in a row means the page keeps rebuilding: a bug to see.
const STALE_ATTEMPTS: usize = 4;

/// A `chromedriver` process on a free loopback port, killed when dropped.
pub struct Driver {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where `name` is on `PATH`, if it is.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// How many times a `chromedriver` that exits before naming its port is
/// started again. Such an exit is a start-up failure of the driver (seen
/// once in a full CI run, never alone), not a state of the page under test.
const DRIVER_STARTS: usize = 3;

/// The most bytes of a failed driver's output kept for the failure message.
const DRIVER_OUTPUT_LIMIT: usize = 8 * 1024;

/// How one start of `chromedriver` ended.
enum Start {
    /// It named its port.
    Port(u16),
    /// Its output ended without a port: it exited. Its output, bounded.
    Exited(String),
}

impl Driver {
    /// Starts `chromedriver --port=0` and reads the port it chose; a driver
    /// that exits before naming one is started again, up to
    /// [`DRIVER_STARTS`] times, and the failure names what each one said.
    pub fn start(program: &Path) -> Driver {
        let mut failures = Vec::new();
        for _ in 0..DRIVER_STARTS {
            let (mut child, start) = Self::start_once(program);
            match start {
                Start::Port(port) => {
                    return Driver {
                        child,
                        base: format!("http://127.0.0.1:{port}"),
                    };
                }
                Start::Exited(output) => {
                    let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                    failures.push(format!("{status}: {output}"));
                }
            }
        }
        panic!(
            "chromedriver exited before naming a port, {DRIVER_STARTS} times: {}",
            failures.join(" | ")
        );
    }

    /// One start: the child and how its output began.
    fn start_once(program: &Path) -> (Child, Start) {
        let mut child = Command::new(program)
            .arg("--port=0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromedriver starts");
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let err_tx = tx.clone();
        std::thread::spawn(move || {
            let mut seen = String::new();
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                keep(&mut seen, &line);
            }
            let _ = err_tx.send(Err(seen));
        });
        std::thread::spawn(move || {
            let mut seen = String::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(port) = line
                    .split("started successfully on port ")
                    .nth(1)
                    .and_then(|p| p.trim_end_matches('.').trim().parse::<u16>().ok())
                {
                    // The loop goes on draining, so the driver never blocks
                    // on a full pipe.
                    let _ = tx.send(Ok(port));
                    continue;
                }
                keep(&mut seen, &line);
            }
            let _ = tx.send(Err(seen));
        });
        // A port, or both streams ended (the driver exited), or a hang.
        let mut said = Vec::new();
        while said.len() < 2 {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(Ok(port)) => return (child, Start::Port(port)),
                Ok(Err(output)) => said.push(output),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("chromedriver named no port within 30 s: {e}; it said: {said:?}");
                }
            }
        }
        (child, Start::Exited(said.join(" / ")))
    }
}

/// Appends a line of a driver's output to `seen`, up to
/// [`DRIVER_OUTPUT_LIMIT`] bytes.
fn keep(seen: &mut String, line: &str) {
    for c in line.chars().chain(std::iter::once('\n')) {
        if seen.len() + c.len_utf8() > DRIVER_OUTPUT_LIMIT {
            return;
        }
        seen.push(c);
    }
}

/// One browser session.
pub struct Session {
    http: reqwest::Client,
    url: String,
}

/// A found element.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Session {
    /// Starts headless Chromium (`binary`) with a fresh profile in
    /// `profile`, its window 1280x800.
    pub async fn start(driver: &Driver, binary: &Path, profile: &Path) -> Session {
        let http = reqwest::Client::new();
        let args = vec![
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-dev-shm-usage".into(),
            "--window-size=1280,800".into(),
            format!("--user-data-dir={}", profile.display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": binary, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let r: Value = http
            .post(format!("{}/session", driver.base))
            .json(&caps)
            .send()
            .await
            .expect("chromedriver answers")
            .json()
            .await
            .unwrap();
        let id = r["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no browser session: {r}"))
            .to_string();
        let s = Session {
            http,
            url: format!("{}/session/{id}", driver.base),
        };
        s.cmd(
            "POST",
            "timeouts",
            json!({"implicit": 10_000, "script": 20_000, "pageLoad": 20_000}),
        )
        .await;
        s
    }

    async fn try_cmd(&self, method: &str, path: &str, body: Value) -> Result<Value, Value> {
        let url = if path.is_empty() {
            self.url.clone()
        } else {
            format!("{}/{path}", self.url)
        };
        let req = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).json(&body),
        };
        let resp = req.send().await.map_err(|e| json!(e.to_string()))?;
        let ok = resp.status().is_success();
        let v: Value = resp.json().await.map_err(|e| json!(e.to_string()))?;
        if ok { Ok(v["value"].clone()) } else { Err(v) }
    }

    async fn cmd(&self, method: &str, path: &str, body: Value) -> Value {
        match self.try_cmd(method, path, body).await {
            Ok(v) => v,
            Err(e) => panic!("WebDriver {method} {path}: {e}"),
        }
    }

    /// Navigates to `url`.
    pub async fn goto(&self, url: &str) {
        self.cmd("POST", "url", json!({"url": url})).await;
    }

    /// The first element matching a CSS selector (waiting up to the
    /// implicit timeout for it to appear).
    pub async fn find(&self, css: &str) -> Element {
        let v = self
            .cmd(
                "POST",
                "element",
                json!({"using": "css selector", "value": css}),
            )
            .await;
        Element(v[ELEMENT].as_str().unwrap().to_string())
    }

    /// Finds the element matching `css` and does `act` on it. When the page
    /// replaced that element between the finding and the acting (WebDriver's
    /// "stale element reference", and only then), it is found again and `act`
    /// repeated, at most [`STALE_ATTEMPTS`] times in all; any other error
    /// fails at once, naming `what`.
    async fn on_element(
        &self,
        what: &str,
        css: &str,
        act: impl AsyncFn(&Element) -> Result<Value, Value>,
    ) -> Value {
        let mut last = Value::Null;
        for _ in 0..STALE_ATTEMPTS {
            let e = self.find(css).await;
            match act(&e).await {
                Ok(v) => return v,
                Err(v) if v["value"]["error"] == "stale element reference" => last = v,
                Err(v) => panic!("WebDriver {what} {css}: {v}"),
            }
        }
        panic!(
            "WebDriver {what} {css}: the element was replaced {STALE_ATTEMPTS} times between \
             finding and acting (last answer: {last})"
        );
    }

    /// Clicks an element.
    pub async fn click(&self, css: &str) {
        self.on_element("click", css, async |e| {
            self.try_cmd("POST", &format!("element/{}/click", e.0), json!({}))
                .await
        })
        .await;
    }

    /// Types `text` into element `e`, after clearing it when `clear`.
    async fn type_into(&self, e: &Element, clear: bool, text: &str) -> Result<Value, Value> {
        if clear {
            self.try_cmd("POST", &format!("element/{}/clear", e.0), json!({}))
                .await?;
        }
        let value = json!({"text": text});
        self.try_cmd("POST", &format!("element/{}/value", e.0), value)
            .await
    }

    /// Replaces the value of an input with `text` (typed as keys).
    pub async fn fill(&self, css: &str, text: &str) {
        self.on_element("fill", css, async |e| self.type_into(e, true, text).await)
            .await;
    }

    /// Sends keys to an element (WebDriver key codes such as `\u{E012}`,
    /// the left arrow, included).
    pub async fn keys(&self, css: &str, text: &str) {
        self.on_element("keys", css, async |e| self.type_into(e, false, text).await)
            .await;
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page.
    pub async fn run(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "execute/sync",
            json!({"script": script, "args": args}),
        )
        .await
    }

    /// Runs `script` asynchronously: it calls its last argument with the
    /// result.
    pub async fn run_async(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "execute/async",
            json!({"script": script, "args": args}),
        )
        .await
    }

    /// Waits until the JavaScript expression `condition` is truthy in the
    /// page (re-checked on every change of the document), returning its
    /// value; the script timeout (20 s) is the deadline.
    pub async fn wait_for(&self, condition: &str) -> Value {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             const check = () => {{
               let v = null;
               try {{ v = ({condition}); }} catch (e) {{ v = null; }}
               if (v) {{ observer.disconnect(); done(v); }}
             }};
             const observer = new MutationObserver(check);
             observer.observe(document, {{subtree: true, childList: true, characterData: true, attributes: true}});
             check();"
        );
        match self
            .try_cmd(
                "POST",
                "execute/async",
                json!({"script": script, "args": []}),
            )
            .await
        {
            Ok(v) => v,
            Err(e) => panic!("the page never satisfied `{condition}`: {e}"),
        }
    }

    /// Makes the frame element matching `css` (in the current browsing
    /// context) the one later commands work in.
    pub async fn enter_frame(&self, css: &str) {
        self.on_element("enter frame", css, async |e| {
            self.try_cmd("POST", "frame", json!({"id": {ELEMENT: e.0}}))
                .await
        })
        .await;
    }

    /// Back to the top-level page.
    pub async fn leave_frames(&self) {
        self.cmd("POST", "frame", json!({"id": null})).await;
    }

    /// The current window's handle.
    pub async fn window(&self) -> String {
        self.cmd("GET", "window", json!({}))
            .await
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Opens a new tab and makes it current; returns its handle.
    pub async fn new_tab(&self) -> String {
        let v = self.cmd("POST", "window/new", json!({"type": "tab"})).await;
        let handle = v["handle"].as_str().unwrap().to_string();
        self.switch_to(&handle).await;
        handle
    }

    /// Makes the window `handle` current.
    pub async fn switch_to(&self, handle: &str) {
        self.cmd("POST", "window", json!({"handle": handle})).await;
    }

    /// Resizes the window.
    pub async fn resize(&self, width: u32, height: u32) {
        self.cmd(
            "POST",
            "window/rect",
            json!({"width": width, "height": height}),
        )
        .await;
    }

    /// A PNG screenshot of the window.
    pub async fn screenshot(&self) -> Option<Vec<u8>> {
        use base64::Engine as _;
        let v = self.try_cmd("GET", "screenshot", json!({})).await.ok()?;
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str()?)
            .ok()
    }

    /// The browser's console messages so far (Chromium's log endpoint).
    pub async fn console(&self) -> Value {
        self.try_cmd("POST", "se/log", json!({"type": "browser"}))
            .await
            .unwrap_or_else(|e| json!({"unavailable": e}))
    }

    /// Ends the session (closing the browser).
    pub async fn quit(&self) {
        let _ = self.try_cmd("DELETE", "", json!({})).await;
    }
}
