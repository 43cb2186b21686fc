//! The telemetry layer's integration tests, in one binary. Each test records
//! into providers of its own ([`sinks::in_memory`]), so they run side by
//! side in one process: what a connection sends is recorded by the
//! telemetry on its own stack, not by whichever was made first.

mod apart;
mod notifications;
mod roles;
mod sinks;
