//! [`Problem`]: how an API request of the inspector fails — an HTTP status
//! and a JSON body `{"error": {"message", "code"?, "data"?}}` that says what
//! went wrong (with the server's JSON-RPC error when the server refused).

use axum::Json;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;
use tessera::client::ClientError;
use tessera::types::ErrorObject;

use crate::exit::{Exit, Failure};

/// A failed API request.
#[derive(Debug)]
pub struct Problem {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong.
    pub message: String,
    /// The server's JSON-RPC error, when it answered with one.
    pub remote: Option<ErrorObject>,
}

impl Problem {
    /// A request the API cannot serve as given (400).
    pub fn bad_request(message: impl Into<String>) -> Problem {
        Problem {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            remote: None,
        }
    }

    /// No such connection or call (404).
    pub fn not_found(message: impl Into<String>) -> Problem {
        Problem {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
            remote: None,
        }
    }

    /// A limit of the inspector was reached (429).
    pub fn limit(message: impl Into<String>) -> Problem {
        Problem {
            status: StatusCode::TOO_MANY_REQUESTS,
            message: message.into(),
            remote: None,
        }
    }

    /// The MCP server failed the request, or could not be reached (502),
    /// or did not answer in time (504); the client refused a setting (400)
    /// or found the server does not offer what was asked (409).
    pub fn client(e: &ClientError, doing: &str) -> Problem {
        let status = match e {
            // What the page asked for is not valid (a root that is not file://).
            ClientError::Config(_) => StatusCode::BAD_REQUEST,
            // The server does not declare what it takes.
            ClientError::Unsupported(_) => StatusCode::CONFLICT,
            _ if Exit::of_client_error(e) == Exit::Timeout => StatusCode::GATEWAY_TIMEOUT,
            _ => StatusCode::BAD_GATEWAY,
        };
        Problem {
            status,
            message: format!("{doing}: {e}"),
            remote: e.remote().cloned(),
        }
    }

    /// A failure of the CLI's shared code (target, HTTP options).
    pub fn failure(f: Failure) -> Problem {
        match f {
            Failure::Usage(m) => Problem::bad_request(m),
            Failure::Runtime(e) | Failure::Coded(_, e) => Problem {
                status: StatusCode::BAD_GATEWAY,
                message: format!("{e:#}"),
                remote: None,
            },
        }
    }
}

/// The body of a failed API request.
#[derive(Serialize)]
pub struct ProblemBody {
    /// What went wrong.
    pub error: ProblemError,
}

/// What went wrong: the message, and the server's JSON-RPC error code and
/// data when the server refused.
#[derive(Serialize)]
pub struct ProblemError {
    /// What went wrong.
    pub message: String,
    /// The server's JSON-RPC error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// The server's error data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ProblemBody {
    /// A body with only a message.
    pub fn message(message: impl Into<String>) -> ProblemBody {
        ProblemBody {
            error: ProblemError {
                message: message.into(),
                code: None,
                data: None,
            },
        }
    }
}

impl Problem {
    /// The body the page receives: the message, with the server's error
    /// code and data when the server refused.
    pub fn body(self) -> ProblemBody {
        let (code, data) = match self.remote {
            Some(r) => (Some(r.code), r.data),
            None => (None, None),
        };
        ProblemBody {
            error: ProblemError {
                message: self.message,
                code,
                data,
            },
        }
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = self.status;
        // Written as it always was: through a `Value`, in name order.
        let body = serde_json::to_value(self.body()).unwrap_or(Value::Null);
        (status, Json(body)).into_response()
    }
}

/// A JSON request body whose rejection (not JSON, wrong shape, wrong
/// content type) is a [`Problem`] like every other failure of the API.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<S, T> FromRequest<S> for Body<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned,
{
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Body(v)),
            Err(rejection) => Err(Problem {
                status: rejection.status(),
                message: format!("the request body: {}", rejection.body_text()),
                remote: None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(p: Problem) -> Value {
        serde_json::to_value(p.body()).unwrap()
    }

    #[test]
    fn the_body_keeps_its_shape() {
        assert_eq!(
            body(Problem::bad_request("no")),
            json!({"error": {"message": "no"}})
        );
        let p = Problem {
            remote: Some(ErrorObject::new(-32602, "theirs").with_data(json!({"x": 1}))),
            ..Problem::not_found("ours")
        };
        assert_eq!(
            body(p),
            json!({"error": {"message": "ours", "code": -32602, "data": {"x": 1}}})
        );
        assert_eq!(
            serde_json::to_value(ProblemBody::message("m")).unwrap(),
            json!({"error": {"message": "m"}})
        );
    }
}
