//! The body of an answer the [`HttpObserver`] watches: each data frame is
//! shown to it as the transport reads it, and the end (or the giving up)
//! once.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use super::body::{AnswerBody, BodyError};
use crate::client_observe::HttpObserver;

/// An answer's body passed through unchanged, its pieces shown to the
/// observer.
pub(crate) struct ObservedBody {
    inner: AnswerBody,
    observer: Arc<dyn HttpObserver>,
    id: u64,
    ended: bool,
}

impl ObservedBody {
    /// Watches `inner`, the body of exchange `id`.
    pub(crate) fn new(inner: AnswerBody, observer: Arc<dyn HttpObserver>, id: u64) -> Self {
        ObservedBody {
            inner,
            observer,
            id,
            ended: false,
        }
    }

    fn end(&mut self, outcome: Result<(), &str>) {
        if !self.ended {
            self.ended = true;
            self.observer.response_end(self.id, outcome);
        }
    }
}

impl Body for ObservedBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.observer.response_body(this.id, data);
                }
            }
            Poll::Ready(Some(Err(e))) => {
                let why = format!("reading the body failed: {e}");
                this.end(Err(&why));
            }
            Poll::Ready(None) => this.end(Ok(())),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for ObservedBody {
    fn drop(&mut self) {
        if self.inner.is_end_stream() {
            self.end(Ok(()));
        } else {
            self.end(Err("the transport did not read the body to its end"));
        }
    }
}
