//! What a prompt handler may return: anything that converts into a
//! `GetPromptResult`.

use std::fmt::Display;

use tessera_types::{ErrorObject, GetPromptResult, PromptMessage};

use crate::response::ProtocolError;

/// Converts a prompt handler's return value into a `prompts/get` result.
///
/// - [`GetPromptResult`]: as is (a missing `description` is filled in with
///   the prompt's own).
/// - `Vec<PromptMessage>` / [`PromptMessage`]: those messages.
/// - `String` / `&'static str`: one user message with that text.
/// - `Result<T, ProtocolError>`: `Err` becomes that JSON-RPC error, for
///   problems with the request (say `-32602` for an argument value the
///   handler cannot use).
/// - `Result<T, E: Display>`: `Err` becomes `-32603` (Internal error) with
///   the error's message: the prompt could not be produced. (A prompt has no
///   `isError` result, unlike a tool.)
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a prompt handler",
    label = "not a prompt result",
    note = "a prompt handler returns a type that implements `IntoPromptResult`: `String`, `&'static str`, `PromptMessage`, `Vec<PromptMessage>`, `GetPromptResult`, or a `Result` of one of these"
)]
pub trait IntoPromptResult {
    /// The conversion.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text(self)]))
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text(self)]))
    }
}

impl<T: IntoPromptResult> IntoPromptResult for Result<T, ProtocolError> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        match self {
            Ok(t) => t.into_prompt_result(),
            Err(e) => Err(e.0),
        }
    }
}

impl<T: IntoPromptResult, E: Display> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        match self {
            Ok(t) => t.into_prompt_result(),
            Err(e) => Err(ErrorObject::internal(format!("Internal error: {e}"))),
        }
    }
}
