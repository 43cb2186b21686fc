//! tessera-proto
