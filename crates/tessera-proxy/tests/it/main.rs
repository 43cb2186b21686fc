//! The integration tests of `tessera-proxy`, one test binary: each module was
//! its own binary once (`cargo test -p tessera-proxy --test it MODULE::`).

mod aggregate_pages;
mod bridge;
mod caller_breaker;
mod caller_credentials;
mod caller_notifications;
mod late_answer;
mod null_id_refusal;
mod raw;
mod reload_subscriptions;
mod session_end;
mod subscription_order;
mod unprefixed;
