//! [`Error`]: what went wrong talking to Redis.

/// What went wrong talking to Redis.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not a Redis URL.
    #[error("invalid Redis URL {0}")]
    InvalidUrl(String),
    /// Redis cannot be reached (connection refused or lost, no answer in
    /// time). The connection is re-established in the background; a later
    /// call may succeed.
    #[error("Redis is unavailable: {0}")]
    Unavailable(String),
    /// Redis answered with an error.
    #[error("Redis failed: {0}")]
    Backend(String),
    /// A stored record could not be read.
    #[error("a record stored in Redis could not be read: {0}")]
    Corrupt(String),
}

impl Error {
    /// Sorts a client error: connection trouble is [`Error::Unavailable`],
    /// anything Redis said is [`Error::Backend`].
    pub(crate) fn from_redis(e: redis::RedisError) -> Self {
        if e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_timeout()
            || e.is_unrecoverable_error()
        {
            Error::Unavailable(e.to_string())
        } else {
            Error::Backend(e.to_string())
        }
    }
}

impl From<Error> for tessera_server::task::TaskStoreError {
    fn from(e: Error) -> Self {
        tessera_server::task::TaskStoreError::Backend(e.to_string())
    }
}

impl From<Error> for tessera_runtime::StoreError {
    fn from(e: Error) -> Self {
        use tessera_runtime::StoreError;
        match e {
            Error::Unavailable(m) => StoreError::Unavailable(m),
            Error::Corrupt(m) => StoreError::Corrupt(m),
            Error::InvalidUrl(m) | Error::Backend(m) => StoreError::Backend(m),
        }
    }
}
