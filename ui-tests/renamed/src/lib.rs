//! Holds the trybuild cases under `tests/`: the macros used through
//! dependencies renamed in `Cargo.toml`.
