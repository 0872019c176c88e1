//! The seeded generator the workloads and arrival processes draw from: [`crate::rng`]'s,
//! under the path it was first published at.

pub use crate::rng::Rng;
