//! tessera-runtime
