//! The body of an answer as the transport reads it: from a pooled
//! connection of the connection's own server ([`PooledBody`]) as it is,
//! anything else (reqwest's answers, hyper_util's, an observed body) boxed
//! by reqwest; and the reading of a whole body.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;

use super::pool::PooledBody;

/// Why reading a body failed.
pub(crate) type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// An answer's body.
pub(crate) enum AnswerBody {
    /// From a connection of the pool, not boxed.
    Pooled(PooledBody),
    /// From any other way.
    Boxed(reqwest::Body),
}

impl AnswerBody {
    /// Reads the whole body, refusing it once it is over `limit` bytes
    /// (what was read is dropped). A body that comes in one piece (an
    /// answer of one write, the common case) is handed on as it came,
    /// without a copy.
    pub(crate) async fn read_whole(mut self, limit: usize) -> Result<Bytes, BodyError> {
        let too_large = || -> BodyError {
            format!(
                "the answer is over {limit} bytes (the client's limit: \
                 HttpClientBuilder::max_message_bytes)"
            )
            .into()
        };
        if self.size_hint().lower() > limit as u64 {
            return Err(too_large());
        }
        let mut first: Option<Bytes> = None;
        let mut rest: Option<BytesMut> = None;
        let mut read = 0usize;
        while let Some(frame) = self.frame().await {
            let Ok(data) = frame?.into_data() else {
                continue;
            };
            read = read.saturating_add(data.len());
            if read > limit {
                return Err(too_large());
            }
            match (&mut first, &mut rest) {
                (_, Some(all)) => all.extend_from_slice(&data),
                (None, None) => first = Some(data),
                (Some(one), None) => {
                    let mut all = BytesMut::with_capacity(one.len() + data.len());
                    all.extend_from_slice(one);
                    all.extend_from_slice(&data);
                    rest = Some(all);
                }
            }
        }
        Ok(match (first, rest) {
            (_, Some(all)) => all.freeze(),
            (one, None) => one.unwrap_or_default(),
        })
    }
}

impl Body for AnswerBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match self.get_mut() {
            AnswerBody::Pooled(b) => Pin::new(b).poll_frame(cx).map_err(Into::into),
            AnswerBody::Boxed(b) => Pin::new(b).poll_frame(cx).map_err(Into::into),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            AnswerBody::Pooled(b) => b.is_end_stream(),
            AnswerBody::Boxed(b) => b.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            AnswerBody::Pooled(b) => b.size_hint(),
            AnswerBody::Boxed(b) => b.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body of the given pieces, boxed as reqwest boxes one.
    fn of(pieces: &[&'static [u8]]) -> AnswerBody {
        let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = pieces
            .iter()
            .map(|p| Ok(Frame::data(Bytes::from_static(p))))
            .collect();
        let stream = futures::stream::iter(frames);
        AnswerBody::Boxed(reqwest::Body::wrap(http_body_util::StreamBody::new(stream)))
    }

    #[tokio::test]
    async fn a_whole_body_is_its_pieces_in_order() {
        assert_eq!(of(&[]).read_whole(usize::MAX).await.unwrap(), Bytes::new());
        assert_eq!(of(&[b"one"]).read_whole(usize::MAX).await.unwrap(), "one");
        assert_eq!(
            of(&[b"a", b"", b"bc", b"d"])
                .read_whole(usize::MAX)
                .await
                .unwrap(),
            "abcd"
        );
        assert_eq!(of(&[b"", b"x"]).read_whole(usize::MAX).await.unwrap(), "x");
    }

    #[tokio::test]
    async fn a_failed_piece_fails_the_whole() {
        let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = vec![
            Ok(Frame::data(Bytes::from_static(b"a"))),
            Err(std::io::Error::other("cut")),
        ];
        let body = AnswerBody::Boxed(reqwest::Body::wrap(http_body_util::StreamBody::new(
            futures::stream::iter(frames),
        )));
        assert!(body.read_whole(usize::MAX).await.is_err());
    }

    /// A body is read up to the limit and refused past it, whether it
    /// comes in one piece or many.
    #[tokio::test]
    async fn a_body_over_the_limit_is_refused() {
        assert_eq!(of(&[b"ab", b"cd"]).read_whole(4).await.unwrap(), "abcd");
        for pieces in [&[&b"abcde"[..]][..], &[b"ab", b"cd", b"e"]] {
            let e = of(pieces).read_whole(4).await.unwrap_err().to_string();
            assert!(
                e.contains("over 4 bytes") && e.contains("max_message_bytes"),
                "{e}"
            );
        }
    }
}
