//! Holds the trybuild cases under `tests/`.
