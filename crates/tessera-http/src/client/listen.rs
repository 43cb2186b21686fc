//! The standalone GET stream of a legacy-era session: the server's own
//! requests and notifications.
//!
//! It is opened once the handshake is done and kept open: when the server
//! ends it, it is reopened with `Last-Event-ID` after the server's `retry:`
//! delay (at least [`MIN_RETRY`], doubling for each reopening in a row that
//! brings no event, at most [`MAX_QUIET_RECONNECTS`] of those); when the
//! server answers `404` (it forgot the session), the connection ends as lost
//! ([`Shared::lose_session`]) and the client sets up a new one. A server
//! without such a stream answers `405`, and the client goes on without one.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderValue, Method, StatusCode};
use http_body_util::BodyExt;

use super::shared::{Shared, lock};
use crate::headers::{LAST_EVENT_ID, MCP_PROTOCOL_VERSION};
use crate::sse::{SseDecoder, SseTooLarge};

/// How many times in a row the stream may be reopened without an event
/// arriving before the client stops reopening it.
pub(crate) const MAX_QUIET_RECONNECTS: u32 = 5;

/// The wait before reopening when the server named none (`retry:`).
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// The longest wait before reopening.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// The shortest wait before reopening, whatever the server's `retry:` says
/// (a server asking for `retry: 0` must not make the client spin).
const MIN_RETRY: Duration = Duration::from_millis(100);

/// How long one GET may take to be answered.
const GET_TIMEOUT: Duration = Duration::from_secs(5);

type Response = super::shared::Response;

/// GETs the stream of the current session, resuming after `last_id`.
async fn get(shared: &Shared, last_id: Option<&str>) -> Result<Response, String> {
    let build = || {
        let mut req = shared.request(Method::GET, None, "text/event-stream");
        let h = req.headers_mut();
        if let Some(v) = shared
            .version()
            .and_then(|v| HeaderValue::from_str(&v).ok())
        {
            h.insert(MCP_PROTOCOL_VERSION, v);
        }
        if let Some(v) = last_id.and_then(|v| HeaderValue::from_str(v).ok()) {
            h.insert(LAST_EVENT_ID, v);
        }
        req
    };
    tokio::time::timeout(GET_TIMEOUT, shared.exchange(build))
        .await
        .map_err(|_| "the GET stream request timed out".to_owned())?
}

/// Opens the GET stream of the session once the server has answered the
/// handshake, so that it is in place before the next request goes out, and
/// keeps it open in the background (replacing any earlier one).
pub(crate) async fn open_listen(shared: &Arc<Shared>) {
    let Some(session) = shared.session() else {
        return;
    };
    let first = match get(shared, None).await {
        Ok(r) if r.status().is_success() || r.status() == StatusCode::NOT_FOUND => r,
        Ok(r) => {
            tracing::debug!("no GET stream: HTTP {}", r.status());
            return;
        }
        Err(e) => {
            tracing::debug!("no GET stream: {e}");
            return;
        }
    };
    let s = shared.clone();
    let task = tokio::spawn(async move { keep_open(s, session, first).await });
    if let Some(old) = lock(&shared.listen).replace(task.abort_handle()) {
        old.abort();
    }
}

/// Where the stream stands between two GETs.
struct Progress {
    last_id: Option<String>,
    retry: Duration,
}

/// Reads the stream and reopens it when it ends; returns when the client
/// should give up, or the server forgot the session.
async fn keep_open(shared: Arc<Shared>, session: String, first: Response) {
    let mut response = Ok(first);
    let mut quiet = 0u32;
    let mut p = Progress {
        last_id: None,
        retry: DEFAULT_RETRY,
    };
    loop {
        match response {
            Ok(r) if r.status().is_success() => match read(&shared, r, &mut p).await {
                Ok(true) => quiet = 0,
                Ok(false) => quiet += 1,
                Err(e) => {
                    // Not reopened: the server would send the same event.
                    tracing::warn!(
                        "{e} (the client's limit: HttpClientBuilder::max_message_bytes): \
                         the GET stream is closed"
                    );
                    return;
                }
            },
            Ok(r) if r.status() == StatusCode::NOT_FOUND => {
                shared.lose_session(&session);
                return;
            }
            Ok(r) => {
                tracing::debug!("GET stream refused: HTTP {}", r.status());
                return;
            }
            Err(e) => {
                tracing::debug!("GET stream failed: {e}");
                quiet += 1;
            }
        }
        if quiet > MAX_QUIET_RECONNECTS {
            tracing::debug!("GET stream closed after {MAX_QUIET_RECONNECTS} quiet reconnections");
            return;
        }
        tokio::time::sleep(backoff(p.retry, quiet)).await;
        if shared.session().as_deref() != Some(session.as_str()) {
            // A request set up a new session, and opens its own stream.
            return;
        }
        response = get(&shared, p.last_id.as_deref()).await;
    }
}

/// The wait before reopening: the server's `retry:`, doubled for each quiet
/// reopening in a row, at most [`MAX_RETRY`].
fn backoff(retry: Duration, quiet: u32) -> Duration {
    let factor = 1u32 << quiet.saturating_sub(1).min(6);
    retry.max(MIN_RETRY).saturating_mul(factor).min(MAX_RETRY)
}

/// Reads one GET stream to its end, handing every message to the engine and
/// noting event ids and `retry:`; whether any event arrived, or the event
/// past the client's limit that ended it.
async fn read(shared: &Shared, r: Response, p: &mut Progress) -> Result<bool, SseTooLarge> {
    let mut body = r.into_body();
    let mut decoder = SseDecoder::with_limit(shared.max_message);
    let mut any = false;
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        for ev in decoder.feed(&data)? {
            any = true;
            if let Some(id) = ev.id {
                p.last_id = Some(id);
            }
            if let Some(ms) = ev.retry {
                p.retry = Duration::from_millis(ms);
            }
            if !ev.data.is_empty() {
                shared.deliver(ev.data.as_bytes()).await;
            }
        }
    }
    Ok(any)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let r = Duration::from_millis(100);
        assert_eq!(backoff(r, 0), r);
        assert_eq!(backoff(r, 1), r);
        assert_eq!(backoff(r, 2), r * 2);
        assert_eq!(backoff(r, 4), r * 8);
        assert_eq!(backoff(Duration::from_secs(20), 3), MAX_RETRY);
        assert_eq!(backoff(r, 40), r * 64);
        assert_eq!(backoff(Duration::ZERO, 0), MIN_RETRY);
    }
}
