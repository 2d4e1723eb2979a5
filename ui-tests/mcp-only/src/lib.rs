//! Holds the trybuild case under `tests/`: an application whose only
//! framework dependency is `mcp`.
