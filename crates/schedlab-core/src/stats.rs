//! Raw statistics collected during a run. [`crate::metrics`] turns them into
//! the reported, self-describing metrics.

use crate::clock::Ns;
use crate::histogram::LatencyHistogram;

/// Exact min/max/sum plus a histogram with HdrHistogram's bins (3
/// significant digits, [`crate::histogram`]) of a latency in ns.
#[derive(Debug, Clone, Default)]
pub struct LatencyStats {
    /// Histogram of the samples (it counts them too: [`Self::count`]).
    pub hist: LatencyHistogram,
    /// Sum of samples.
    pub sum: u128,
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
}

impl LatencyStats {
    /// Add one sample.
    pub fn record(&mut self, v: Ns) {
        if self.hist.is_empty() || v < self.min {
            self.min = v;
        }
        self.hist.record(v);
        self.max = self.max.max(v);
        self.sum += v as u128;
    }

    /// Samples.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Value at quantile `q` (0..=1), ns, within the smallest and largest
    /// sample: the histogram answers with its bin's upper edge (up to 0.1 %
    /// above the sample), which must not report a p99 above the maximum.
    pub fn quantile(&self, q: f64) -> Ns {
        if self.hist.is_empty() {
            return 0;
        }
        self.hist.value_at_quantile(q).clamp(self.min, self.max)
    }

    /// Mean, ns.
    pub fn mean(&self) -> f64 {
        if self.hist.is_empty() {
            0.0
        } else {
            self.sum as f64 / self.count() as f64
        }
    }
}

/// One activation of a periodic rt-app timer, i.e. one completed job: the
/// work between two activations.
#[derive(Debug, Clone, Copy)]
pub struct Activation {
    /// Time the task reached its `timer` event: the job's finish.
    pub at: Ns,
    /// Time left before the activation (negative: overrun, a missed activation).
    pub slack: i64,
    /// The job's release (its activation time).
    pub release: Ns,
    /// When the job first ran.
    pub start: Ns,
    /// Absolute deadline: release + dl-deadline for SCHED_DEADLINE tasks,
    /// release + timer period otherwise.
    pub deadline: Ns,
}

/// An optional time in 8 bytes (`u64::MAX` stands for none), so that what
/// a switch touches of [`TaskStats`] fits its first cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaybeNs(u64);

impl Default for MaybeNs {
    fn default() -> Self {
        MaybeNs::NONE
    }
}

impl MaybeNs {
    /// No time.
    pub const NONE: MaybeNs = MaybeNs(u64::MAX);

    /// The time, if any.
    pub fn get(self) -> Option<Ns> {
        (self.0 != u64::MAX).then_some(self.0)
    }

    /// Set (a time of `u64::MAX` ns, beyond any run, is refused).
    pub fn set(&mut self, v: Option<Ns>) {
        assert!(v != Some(u64::MAX), "time out of range");
        self.0 = v.unwrap_or(u64::MAX);
    }

    /// The time, leaving none.
    pub fn take(&mut self) -> Option<Ns> {
        let v = self.get();
        self.0 = u64::MAX;
        v
    }

    /// Set to `v` unless a time is already there.
    pub fn get_or_insert(&mut self, v: Ns) {
        if self.get().is_none() {
            self.set(Some(v));
        }
    }
}

/// Per-task counters (`repr(C)`, cache-line aligned: what a switch to the
/// task reads and writes shares the first line, since that task may have
/// waited behind thousands of others and be out of cache; see
/// [`crate::task::Task`]).
#[derive(Debug, Clone, Default)]
#[repr(C, align(64))]
pub struct TaskStats {
    /// The task sleeps on its timer until this release.
    pub awaiting: MaybeNs,
    /// Start of the current job (first run after its release).
    pub job_start: MaybeNs,
    /// Time runnable but not running.
    pub wait_time: Ns,
    /// `work_done` when the task was last switched in (start of its quantum).
    pub quantum_work: u64,
    /// `run` work completed, reference ns.
    pub work_done: u64,
    /// Time on a CPU.
    pub cpu_time: Ns,
    /// Voluntary context switches (the task blocked).
    pub nvcsw: u64,
    /// Involuntary context switches (preempted while runnable).
    pub nivcsw: u64,
    /// CPU changes.
    pub migrations: u64,
    /// Completed iterations of the phase list.
    pub loops_done: u64,
    /// Release of the current (or awaited) job and its relative deadline.
    pub job: Option<(Ns, Ns)>,
    /// Timer activations.
    pub activations: Vec<Activation>,
    /// Waking → running latencies.
    pub wakeup_latency: LatencyStats,
    /// The CPU of its first switch-in.
    pub first_cpu: Option<usize>,
}

/// Statistics of a whole run.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Per task, by task id.
    pub tasks: Vec<TaskStats>,
    /// Events popped from the event queue.
    pub events: u64,
    /// Wakeups (`try_to_wake_up` that woke a task).
    pub wakeups: u64,
    /// Load-balance migrations.
    pub balance_migrations: u64,
    /// Weight-policy updates at context switches (TSF computations).
    pub policy_updates: u64,
    /// CPU time spent on them (tunable `tsf_cost_ns` each).
    pub policy_overhead: u64,
}

#[cfg(test)]
mod tests {
    use super::LatencyStats;

    #[test]
    fn quantiles_stay_within_the_samples() {
        // 20,000 ns falls in a bin of width 16 (HdrHistogram, 3 digits): its upper
        // edge, 20,015, must not be reported as p99 when every sample is 20,000.
        let mut l = LatencyStats::default();
        for _ in 0..10 {
            l.record(20_000);
        }
        assert_eq!(l.hist.value_at_quantile(0.99), 20_015);
        assert_eq!(l.quantile(0.99), 20_000);
        assert_eq!(l.quantile(0.5), 20_000);
        l.record(1_000_000);
        assert_eq!(l.quantile(1.0), 1_000_000);
        assert_eq!(LatencyStats::default().quantile(0.5), 0);
    }
}
