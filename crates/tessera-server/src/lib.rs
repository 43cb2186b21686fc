//! tessera-server
