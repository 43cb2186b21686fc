//! [`CompletionHandler`]: plain async functions as completion providers
//! (implemented in `crate::handler`, with the other kinds of handler), and
//! [`IntoCompletion`]: what they may return.

use std::fmt::Display;
use std::sync::Arc;

use tessera_runtime::BoxFuture;
use tessera_types::{CompleteResult, Completion, ErrorObject};

use crate::completion::request::CompletionRequest;
use crate::extract::HandlerInput;
use crate::response::ProtocolError;

/// The most values one `completion/complete` result may carry.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// Converts a completion handler's return value into a `completion/complete` result.
///
/// - `Vec<String>` / `Vec<&'static str>`: every match; the server sends the
///   first 100 and sets `total` to the length and `hasMore` when it cut.
/// - [`Completion`] / [`CompleteResult`]: as given (a handler that knows
///   there are more matches than it lists sets `total` and `hasMore`
///   itself); the server still cuts `values` at 100 and then sets `hasMore`.
/// - `Result<T, ProtocolError>`: `Err` becomes that JSON-RPC error (for
///   example `-32602` for a context the handler refuses).
/// - `Result<T, E: Display>`: `Err` becomes `-32603` (Internal error) with
///   the error's message.
pub trait IntoCompletion {
    /// The conversion.
    fn into_completion(self) -> Result<CompleteResult, ErrorObject>;
}

impl IntoCompletion for CompleteResult {
    fn into_completion(self) -> Result<CompleteResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<CompleteResult, ErrorObject> {
        Ok(CompleteResult {
            completion: self,
            ..CompleteResult::default()
        })
    }
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<CompleteResult, ErrorObject> {
        Ok(CompleteResult::new(self))
    }
}

impl IntoCompletion for Vec<&'static str> {
    fn into_completion(self) -> Result<CompleteResult, ErrorObject> {
        Ok(CompleteResult::new(
            self.into_iter().map(str::to_owned).collect(),
        ))
    }
}

impl<T: IntoCompletion> IntoCompletion for Result<T, ProtocolError> {
    fn into_completion(self) -> Result<CompleteResult, ErrorObject> {
        match self {
            Ok(t) => t.into_completion(),
            Err(e) => Err(e.0),
        }
    }
}

impl<T: IntoCompletion, E: Display> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<CompleteResult, ErrorObject> {
        match self {
            Ok(t) => t.into_completion(),
            Err(e) => Err(ErrorObject::internal(format!(
                "Internal error: completion failed: {e}"
            ))),
        }
    }
}

/// Applies the protocol's limits to a handler's answer: at most 100 values,
/// `total` never below what was found, `hasMore` whenever values were left out.
pub(crate) fn limit(mut result: CompleteResult) -> CompleteResult {
    let c = &mut result.completion;
    let found = c.values.len();
    let found_u64 = u64::try_from(found).unwrap_or(u64::MAX);
    let total = c.total.unwrap_or(found_u64).max(found_u64);
    c.total = Some(total);
    if found > MAX_COMPLETION_VALUES {
        c.values.truncate(MAX_COMPLETION_VALUES);
    }
    let sent = u64::try_from(c.values.len()).unwrap_or(u64::MAX);
    c.has_more = Some(found > MAX_COMPLETION_VALUES || c.has_more.unwrap_or(total > sent));
    result
}

/// An async function usable as a completion provider: every parameter
/// implements [`FromRequest<S, CompletionRequest>`](crate::FromRequest)
/// (usually just one [`CompletionRequest`]) and the output implements [`IntoCompletion`].
///
/// ```
/// use tessera_server::CompletionRequest;
///
/// async fn languages(req: CompletionRequest) -> Vec<String> {
///     req.complete_from(["python", "rust", "ruby"])
/// }
/// # let _ = languages;
/// ```
///
/// `M` is a marker that keeps the implementations for different arities
/// apart; it is inferred.
pub trait CompletionHandler<M, S>: Clone + Send + Sync + 'static {
    /// Runs the handler.
    fn call(
        &self,
        input: HandlerInput<S, CompletionRequest>,
    ) -> BoxFuture<'static, Result<CompleteResult, ErrorObject>>;
}

/// A completion provider with its types erased.
pub(crate) type ErasedCompleter<S> = Arc<
    dyn Fn(
            HandlerInput<S, CompletionRequest>,
        ) -> BoxFuture<'static, Result<CompleteResult, ErrorObject>>
        + Send
        + Sync,
>;

/// Erases a completion handler's types.
pub(crate) fn erase<H, M, S>(handler: H) -> ErasedCompleter<S>
where
    H: CompletionHandler<M, S>,
    S: Send + Sync + 'static,
{
    Arc::new(move |input| handler.call(input))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("v{i}")).collect()
    }

    #[test]
    fn limits_values_and_sets_total_and_has_more() {
        let r = limit(CompleteResult::new(values(150)));
        assert_eq!(r.completion.values.len(), 100);
        assert_eq!(r.completion.total, Some(150));
        assert_eq!(r.completion.has_more, Some(true));

        let r = limit(CompleteResult::new(values(3)));
        assert_eq!(r.completion.total, Some(3));
        assert_eq!(r.completion.has_more, Some(false));

        let r = limit(CompleteResult::new(Vec::new()));
        assert_eq!(r.completion.total, Some(0));
        assert_eq!(r.completion.has_more, Some(false));
    }

    #[test]
    fn keeps_what_a_handler_knows() {
        // The handler listed 10 of 500.
        let mut c = CompleteResult::new(values(10));
        c.completion.total = Some(500);
        let r = limit(c);
        assert_eq!(r.completion.total, Some(500));
        assert_eq!(r.completion.has_more, Some(true));

        // A total below the values found is raised; an explicit hasMore is kept.
        let mut c = CompleteResult::new(values(10));
        c.completion.total = Some(2);
        c.completion.has_more = Some(true);
        let r = limit(c);
        assert_eq!(r.completion.total, Some(10));
        assert_eq!(r.completion.has_more, Some(true));
    }
}
