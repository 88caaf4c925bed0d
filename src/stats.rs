//! Process-wide counters: what ran where, how often the GPU was asked, and how many bytes
//! crossed between host and device memory. They prove which path a benchmark measured.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[derive(Default)]
pub struct Counters {
    /// Calls recorded for later execution.
    pub deferred: AtomicU64,
    /// Calls executed at once on the CPU (stride smaller than the block, or no recorder).
    pub immediate: AtomicU64,
    /// Calls ignored because a pointer was null.
    pub rejected: AtomicU64,
    /// Deferred calls that the GPU executed.
    pub gpu_calls: AtomicU64,
    /// Deferred calls that the CPU reference executed (CPU mode, fallback, straddling calls).
    pub cpu_calls: AtomicU64,
    pub flushes: AtomicU64,
    pub submissions: AtomicU64,
    pub dispatches: AtomicU64,
    /// Bytes the host wrote for the GPU: coefficients, jobs, pixels of copied blocks.
    pub bytes_to_device: AtomicU64,
    /// Bytes the host read back: pixels of copied blocks.
    pub bytes_from_device: AtomicU64,
    /// GPU execution time measured with timestamps, in nanoseconds.
    pub gpu_busy_ns: AtomicU64,
}

pub static COUNTERS: Counters = Counters {
    deferred: AtomicU64::new(0),
    immediate: AtomicU64::new(0),
    rejected: AtomicU64::new(0),
    gpu_calls: AtomicU64::new(0),
    cpu_calls: AtomicU64::new(0),
    flushes: AtomicU64::new(0),
    submissions: AtomicU64::new(0),
    dispatches: AtomicU64::new(0),
    bytes_to_device: AtomicU64::new(0),
    bytes_from_device: AtomicU64::new(0),
    gpu_busy_ns: AtomicU64::new(0),
};

pub fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Relaxed);
}

pub fn read(counter: &AtomicU64) -> u64 {
    counter.load(Relaxed)
}
