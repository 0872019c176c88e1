//! Lints (placeholder, filled below).
