//! The resource-server half of MCP authorization (work in progress).
