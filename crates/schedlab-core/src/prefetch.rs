//! A hint to the processor: start loading the cache line of a value that
//! will be read soon, without waiting for it.
//!
//! Why: with thousands of tasks (issue 18's big machine: 10,000 on 256
//! CPUs) the task a switch or a wakeup is about to touch has waited behind
//! many others, and each of its structures (the task, its counters, its
//! class's entity and signals) is a cache miss. Read one after the other,
//! the misses add up; hinted together where the task becomes known, they
//! overlap each other and the work in between. The kernel does the same
//! for the entity `update_curr` reads (`prefetch_curr_exec_start`,
//! kernel/sched/core.c, v6.1 to v6.18: "we observe a high rate of cache
//! misses in practice. Prefetching this data results in improved
//! performance").
//!
//! A prefetch changes no value the program can see, so no output depends
//! on where the hints are: they are a matter of speed alone.

/// Fewer tasks than this and no hint is given (engine/lookahead.rs and
/// the classes' hints). Why: a task's structures (its task, counters, fair
/// entity and signals) take about 1 KiB, so a few hundred tasks fit one
/// core's 512 KiB second-level cache and their misses are rare, while the
/// hints cost instructions at every event (+1.5 % for the 16-task
/// global-EDF anchor, counted with valgrind). The bound is set from those
/// sizes, not tuned by timings.
pub const MIN_TASKS: usize = 512;

/// Start loading the cache line that holds `value` (into every level, as
/// the kernel's `prefetch()`). A no-op where the target has no prefetch
/// instruction this crate uses.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 only hints the cache hierarchy: it never faults
    // (not even on an invalid address, and a reference is valid anyway),
    // writes nothing and changes no architectural state; SSE, which the
    // intrinsic requires, is part of every x86_64 target's baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
