//! Helpers shared by the integration tests.

pub mod mirgen;
pub mod cfggen;
pub mod opmatrix;
