//! A failure bound for anything a test awaits: a test that waits for a state
//! that never comes fails with what it waited for instead of hanging.

use std::future::Future;
use std::time::Duration;

/// How long a test waits for any one thing before it fails.
pub const BOUND: Duration = Duration::from_secs(30);

/// Awaits `f`, failing the test (naming `what`) if it takes longer than
/// [`BOUND`].
pub async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {BOUND:?}"))
}
