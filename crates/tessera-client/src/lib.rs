//! tessera-client
