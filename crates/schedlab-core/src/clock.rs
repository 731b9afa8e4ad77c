//! Simulated time. Everything is an integer number of nanoseconds since the
//! start of the run: no floating point, no wall clock (DEVELOPERS.md,
//! "Determinism").

/// Simulated nanoseconds since the start of the run.
pub type Ns = u64;

/// One microsecond in [`Ns`].
pub const USEC: Ns = 1_000;
/// One millisecond in [`Ns`].
pub const MSEC: Ns = 1_000_000;
/// One second in [`Ns`].
pub const SEC: Ns = 1_000_000_000;

/// Length of one scheduler tick at `hz` ticks per second (`TICK_NSEC`).
pub fn tick_ns(hz: u32) -> Ns {
    SEC / hz.max(1) as u64
}

/// Nanoseconds as (fractional) microseconds, for reports only.
pub fn to_us(ns: Ns) -> f64 {
    ns as f64 / 1_000.0
}
