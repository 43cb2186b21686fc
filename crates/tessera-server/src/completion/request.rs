//! [`CompletionRequest`]: what a completion handler is asked (the body of
//! a `completion/complete`, itself an extractor).

use std::collections::BTreeMap;

use crate::extract::{FromRequest, HandlerInput, Rejection, RequestBody};

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionTarget {
    /// An argument of the prompt with this name (`ref/prompt`).
    Prompt(String),
    /// A variable of the resource template with this URI template (`ref/resource`).
    ResourceTemplate(String),
}

/// One `completion/complete` request, as a completion handler sees it: the
/// body of the request (its context, state and server are in the
/// [`RequestParts`](crate::RequestParts); take [`RequestContext`](crate::RequestContext)
/// as another parameter to read them).
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// The prompt or resource template whose argument is being completed.
    pub target: CompletionTarget,
    /// The name of the argument (or template variable) being completed.
    pub argument: String,
    /// What the user has typed so far.
    pub value: String,
    /// The values of the other arguments the user already chose
    /// (`context.arguments`; empty when the client sent none).
    pub arguments: BTreeMap<String, String>,
}

impl CompletionRequest {
    /// The already chosen value of another argument, from `context.arguments`.
    pub fn resolved(&self, argument: &str) -> Option<&str> {
        self.arguments.get(argument).map(String::as_str)
    }

    /// The candidates that start with the value typed so far; see [`complete_from`].
    pub fn complete_from<I, T>(&self, candidates: I) -> Vec<String>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        complete_from(candidates, &self.value)
    }
}

/// The candidates that start with `prefix`, ignoring case, ranked by
/// relevance: candidates that match with the exact case come first; within
/// each group the candidates keep their order.
///
/// Return the whole list: the server sends at most 100 values and sets
/// `total` and `hasMore` from the list's length.
pub fn complete_from<I, T>(candidates: I, prefix: &str) -> Vec<String>
where
    I: IntoIterator<Item = T>,
    T: AsRef<str>,
{
    let folded = prefix.to_lowercase();
    let mut exact = Vec::new();
    let mut loose = Vec::new();
    for c in candidates {
        let c = c.as_ref();
        if c.starts_with(prefix) {
            exact.push(c.to_owned());
        } else if c.to_lowercase().starts_with(&folded) {
            loose.push(c.to_owned());
        }
    }
    exact.extend(loose);
    exact
}

impl RequestBody for CompletionRequest {
    /// Completion extractors declare nothing.
    type Declaration = ();
}

impl<S> FromRequest<S, CompletionRequest> for CompletionRequest {
    fn from_request(input: &mut HandlerInput<S, CompletionRequest>) -> Result<Self, Rejection> {
        Ok(input.body.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_filter_ranks_exact_case_first() {
        let c = ["Python", "pytorch", "perl", "PyPy", "rust", "python3"];
        assert_eq!(
            complete_from(c, "py"),
            vec!["pytorch", "python3", "Python", "PyPy"]
        );
        assert_eq!(complete_from(c, "").len(), 6);
        assert!(complete_from(c, "zz").is_empty());
        assert_eq!(
            complete_from(vec![String::from("Äpfel")], "äp"),
            vec!["Äpfel"]
        );
    }
}
