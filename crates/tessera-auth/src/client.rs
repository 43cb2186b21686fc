//! The client half of MCP authorization (work in progress).
