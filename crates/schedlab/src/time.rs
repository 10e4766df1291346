//! Time: integer nanoseconds, and the kernel's PELT units.

/// Simulated time and durations, in nanoseconds.
pub type Ns = u64;

/// PELT measures time in units of 1024 ns ("~1 µs"): `delta >>= 10` in `___update_load_sum`.
pub const PELT_UNIT_SHIFT: u32 = 10;

/// One PELT period: 1024 units of 1024 ns (`accumulate_sum`: `periods = delta / 1024`).
pub const PELT_PERIOD_NS: Ns = 1024 << PELT_UNIT_SHIFT;

/// A duration in PELT periods, as a real number (for reports; the arithmetic stays integer).
pub fn ns_to_periods(ns: Ns) -> f64 {
    ns as f64 / PELT_PERIOD_NS as f64
}
