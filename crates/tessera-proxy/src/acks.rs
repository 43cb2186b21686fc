//! The listen streams a proxy opens on one upstream connection
//! (2026-07-28), and their acknowledgements, matched by request id: a
//! stream is in place once `notifications/subscriptions/acknowledged`
//! names its request, and what the upstream tells after that is heard.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use tessera_proto::RequestOptions;
use tessera_runtime::Peer;
use tessera_types::{
    ErrorObject, RequestId, SubscriptionFilter, SubscriptionsListenRequestParams, methods,
};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Acknowledgements remembered that arrived before anyone waited for them.
const MAX_EARLY: usize = 64;
/// The most acknowledgements waited for at once on one connection.
const MAX_WAITING: usize = 1024;

/// The acknowledgements of one connection's listen streams.
#[derive(Default)]
pub(crate) struct Acks {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    waiting: HashMap<RequestId, oneshot::Sender<()>>,
    early: VecDeque<RequestId>,
}

impl Acks {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The upstream acknowledged the stream of request `id`.
    pub(crate) fn heard(&self, id: RequestId) {
        let mut s = self.lock();
        match s.waiting.remove(&id) {
            Some(tx) => {
                let _ = tx.send(());
            }
            None => {
                if s.early.len() >= MAX_EARLY {
                    s.early.pop_front();
                }
                s.early.push_back(id);
            }
        }
    }

    /// Completes when the stream of request `id` is acknowledged (at once
    /// if it already was); `None` when too many are waited for.
    fn wait_for(&self, id: RequestId) -> Option<oneshot::Receiver<()>> {
        let (tx, rx) = oneshot::channel();
        let mut s = self.lock();
        if let Some(i) = s.early.iter().position(|x| *x == id) {
            s.early.remove(i);
            let _ = tx.send(());
            return Some(rx);
        }
        s.waiting.retain(|_, tx| !tx.is_closed());
        if s.waiting.len() >= MAX_WAITING {
            return None;
        }
        s.waiting.insert(id, tx);
        Some(rx)
    }

    /// Opens a listen stream for `notifications` on `peer`, and waits until
    /// the upstream acknowledges it (at most `wait`, and no longer than
    /// `cancel`). The stream lasts until the returned token is cancelled or
    /// the connection ends; `peer` does not keep the connection open. The
    /// token is cancelled too when the stream ends by itself (the upstream
    /// ended it or went away), so its holder can tell. A stream the
    /// upstream refuses or ends before acknowledging is an error.
    pub(crate) async fn listen(
        &self,
        peer: Peer,
        notifications: SubscriptionFilter,
        wait: Duration,
        cancel: &CancellationToken,
    ) -> Result<CancellationToken, ErrorObject> {
        let params = SubscriptionsListenRequestParams {
            meta: None,
            notifications,
        };
        let p = crate::shapes::write(&params)?;
        let stop = CancellationToken::new();
        let (assigned, id) = oneshot::channel();
        let options = RequestOptions {
            no_timeout: true,
            ..RequestOptions::default()
        };
        let ended = stop.clone();
        let mut task = tokio::spawn(async move {
            let ask = peer.request_tracked(
                methods::SUBSCRIPTIONS_LISTEN,
                Some(p.into()),
                options,
                None,
                assigned,
                false,
            );
            let out = tokio::select! {
                out = ask => out.map(drop).map_err(|e| crate::forward::peer_error(methods::SUBSCRIPTIONS_LISTEN, e)),
                _ = ended.cancelled() => Ok(()),
            };
            ended.cancel();
            out
        });
        let ended_early = |out: Result<Result<(), ErrorObject>, tokio::task::JoinError>| {
            out.ok().and_then(Result::err).unwrap_or_else(|| {
                ErrorObject::internal(
                    "the upstream ended the listen stream before acknowledging it",
                )
            })
        };
        let id = tokio::select! {
            id = id => match id {
                Ok(id) => id,
                Err(_) => return Err(ended_early((&mut task).await)),
            },
            _ = cancel.cancelled() => {
                stop.cancel();
                return Err(ErrorObject::internal("cancelled by the client"));
            }
        };
        let Some(acked) = self.wait_for(id) else {
            stop.cancel();
            return Err(ErrorObject::internal(format!(
                "the upstream connection already has {MAX_WAITING} listen streams waiting for \
                 their acknowledgement; try again later"
            )));
        };
        tokio::select! {
            _ = tokio::time::timeout(wait, acked) => Ok(stop),
            out = &mut task => Err(ended_early(out)),
            _ = cancel.cancelled() => {
                stop.cancel();
                Err(ErrorObject::internal("cancelled by the client"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn acknowledgements_match_their_request_early_or_late() {
        let acks = Acks::default();
        let late = acks.wait_for(RequestId::Number(1)).unwrap();
        acks.heard(RequestId::Number(2));
        acks.heard(RequestId::Number(1));
        late.await.expect("acknowledged");
        // Heard before anyone waited: remembered.
        acks.wait_for(RequestId::Number(2)).unwrap().await.unwrap();
        // A bounded memory of early ones.
        for i in 0..(MAX_EARLY as i64 + 10) {
            acks.heard(RequestId::Number(100 + i));
        }
        assert_eq!(acks.lock().early.len(), MAX_EARLY);
        assert!(acks.lock().waiting.is_empty());
    }
}
