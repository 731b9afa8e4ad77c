//! The machine: CPUs, SMT siblings, last-level-cache groups, capacity and
//! frequency. Immutable once built, like `scx_utils::Topology`: a different
//! machine is a different `Topology` (style.md, convention 8).
//!
//! ```text
//!   Topology
//!   └── LLC 0 ── core 0 ── cpu 0, cpu 1 (SMT siblings)
//!             └─ core 1 ── cpu 2, cpu 3
//!   └── LLC 1 ── ...
//! ```

use crate::cpuset::{CpuId, CpuSet, MAX_CPUS};
use serde::Serialize;

/// The highest CPU frequency a run takes, MHz (100 GHz: beyond any CPU).
/// Why a bound: work progresses at a rate made of frequency × capacity ×
/// calibration, and past about 2.25 × 10^9 MHz that product left u64 and a run
/// silently did no work at all (QA, 2026-11-29).
pub const MAX_FREQ_MHZ: u64 = 100_000;

/// `SCHED_CAPACITY_SCALE`: the capacity of the biggest CPU at full frequency.
pub const CAPACITY_SCALE: u64 = 1024;

/// One logical CPU.
#[derive(Debug, Clone, Serialize)]
pub struct Cpu {
    /// Index.
    pub id: CpuId,
    /// Physical core (CPUs of one core are SMT siblings).
    pub core: usize,
    /// Last-level cache group.
    pub llc: usize,
    /// Original capacity, 1..=1024 (`arch_scale_cpu_capacity`).
    pub capacity: u64,
    /// Current frequency in kHz.
    pub freq_khz: u64,
    /// Maximum frequency in kHz.
    pub max_freq_khz: u64,
}

/// Immutable description of the simulated machine.
#[derive(Debug, Clone, Serialize)]
pub struct Topology {
    cpus: Vec<Cpu>,
    #[serde(skip)]
    siblings: Vec<CpuSet>,
    #[serde(skip)]
    llc_span: Vec<CpuSet>,
    #[serde(skip)]
    all: CpuSet,
    /// Some core has more than one thread (asked at every wakeup: kept, not
    /// recounted).
    #[serde(skip)]
    smt: bool,
}

/// Builder for [`Topology`].
#[derive(Debug, Clone)]
pub struct TopologyBuilder {
    nr_cpus: usize,
    smt: usize,
    cpus_per_llc: usize,
    capacity: Vec<u64>,
    freq_khz: Vec<(u64, u64)>,
}

/// Why a topology cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyError(pub String);

impl std::fmt::Display for TopologyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TopologyBuilder {
    /// `nr_cpus` identical CPUs, no SMT, one LLC, capacity 1024.
    pub fn new(nr_cpus: usize) -> Self {
        TopologyBuilder {
            nr_cpus,
            smt: 1,
            cpus_per_llc: nr_cpus,
            capacity: vec![],
            freq_khz: vec![],
        }
    }

    /// Threads per core (1 = no SMT).
    pub fn smt(mut self, threads_per_core: usize) -> Self {
        self.smt = threads_per_core;
        self
    }

    /// CPUs sharing one last-level cache.
    pub fn cpus_per_llc(mut self, n: usize) -> Self {
        self.cpus_per_llc = n;
        self
    }

    /// Per-CPU original capacity (1..=1024); missing entries are 1024.
    pub fn capacities(mut self, caps: Vec<u64>) -> Self {
        self.capacity = caps;
        self
    }

    /// Per-CPU (current, maximum) frequency in kHz; a single entry applies
    /// to every CPU; missing entries are 2 GHz / 2 GHz.
    pub fn frequencies(mut self, khz: Vec<(u64, u64)>) -> Self {
        self.freq_khz = khz;
        self
    }

    /// Build, checking that the shape is consistent.
    pub fn build(self) -> Result<Topology, TopologyError> {
        let n = self.nr_cpus;
        if n == 0 || n > MAX_CPUS {
            return Err(TopologyError(format!(
                "cpus must be between 1 and {MAX_CPUS}, got {n}"
            )));
        }
        if self.smt == 0 || n % self.smt != 0 {
            return Err(TopologyError(format!(
                "{n} CPUs cannot be split into cores of {} SMT threads",
                self.smt
            )));
        }
        if self.cpus_per_llc == 0 || n % self.cpus_per_llc != 0 || self.cpus_per_llc % self.smt != 0
        {
            return Err(TopologyError(format!(
                "{n} CPUs cannot be split into LLC groups of {} CPUs (whole cores)",
                self.cpus_per_llc
            )));
        }
        for (what, len) in [
            ("capacity", self.capacity.len()),
            ("frequency", self.freq_khz.len()),
        ] {
            if len > 1 && len != n {
                return Err(TopologyError(format!(
                    "{what} list has {len} entries for {n} CPUs (give one for all, or one per CPU)"
                )));
            }
        }
        let pick = |v: &[u64], id: usize| if v.len() == 1 { v.first() } else { v.get(id) }.copied();
        let freqs: Vec<(u64, u64)> = self.freq_khz.clone();
        let mut cpus = Vec::with_capacity(n);
        for id in 0..n {
            let capacity = pick(&self.capacity, id).unwrap_or(CAPACITY_SCALE);
            let (freq_khz, max_freq_khz) = if freqs.len() == 1 {
                freqs.first()
            } else {
                freqs.get(id)
            }
            .copied()
            .unwrap_or((2_000_000, 2_000_000));
            if freq_khz == 0 || freq_khz > max_freq_khz {
                return Err(TopologyError(format!(
                    "frequency of cpu {id} must be 1..=max ({} MHz), got {} MHz",
                    max_freq_khz / 1000,
                    freq_khz / 1000
                )));
            }
            if capacity == 0 || capacity > CAPACITY_SCALE {
                return Err(TopologyError(format!(
                    "capacity of cpu {id} must be 1..=1024, got {capacity}"
                )));
            }
            cpus.push(Cpu {
                id,
                core: id / self.smt,
                llc: id / self.cpus_per_llc,
                capacity,
                freq_khz,
                max_freq_khz,
            });
        }
        let siblings: Vec<CpuSet> = cpus
            .iter()
            .map(|c| span(&cpus, |o| o.core == c.core))
            .collect();
        let llc_span = cpus
            .iter()
            .map(|c| span(&cpus, |o| o.llc == c.llc))
            .collect();
        Ok(Topology {
            all: CpuSet::first_n(n),
            cpus,
            smt: siblings.iter().any(|s| s.count() > 1),
            siblings,
            llc_span,
        })
    }
}

fn span(cpus: &[Cpu], pred: impl Fn(&Cpu) -> bool) -> CpuSet {
    let mut s = CpuSet::empty();
    for c in cpus.iter().filter(|c| pred(c)) {
        s.insert(c.id);
    }
    s
}

impl Topology {
    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// All CPUs.
    pub fn all(&self) -> CpuSet {
        self.all
    }

    /// One CPU.
    pub fn cpu(&self, id: CpuId) -> &Cpu {
        &self.cpus[id]
    }

    /// SMT siblings of `cpu`, itself included (`cpu_smt_mask`).
    pub fn siblings(&self, cpu: CpuId) -> CpuSet {
        self.siblings[cpu]
    }

    /// Whether any core has more than one hardware thread.
    pub fn has_smt(&self) -> bool {
        self.smt
    }

    /// CPUs sharing the last-level cache with `cpu` (`sd_llc` span).
    pub fn llc(&self, cpu: CpuId) -> CpuSet {
        self.llc_span[cpu]
    }

    /// Whether two CPUs share the LLC (`cpus_share_cache`).
    pub fn share_cache(&self, a: CpuId, b: CpuId) -> bool {
        self.cpus[a].llc == self.cpus[b].llc
    }

    /// Whether there is more than one LLC group.
    pub fn has_multiple_llcs(&self) -> bool {
        self.cpus.iter().any(|c| c.llc != 0)
    }

    /// Work rate of `cpu` relative to a 1024-capacity CPU at its maximum
    /// frequency, as (numerator, denominator): rt-app `run` work scales with
    /// it (../shared/formats.md §1.2, `run`).
    pub fn rate(&self, cpu: CpuId) -> (u64, u64) {
        let c = &self.cpus[cpu];
        (c.capacity * c.freq_khz, CAPACITY_SCALE * c.max_freq_khz)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smt_and_llc_spans() {
        let t = TopologyBuilder::new(8)
            .smt(2)
            .cpus_per_llc(4)
            .build()
            .expect("valid");
        assert_eq!(t.siblings(3).iter().collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(t.llc(5).iter().collect::<Vec<_>>(), vec![4, 5, 6, 7]);
        assert!(t.has_smt() && t.has_multiple_llcs());
        assert!(!t.share_cache(3, 4));
    }

    #[test]
    fn rejects_inconsistent_shapes() {
        assert!(TopologyBuilder::new(3).smt(2).build().is_err());
        assert!(TopologyBuilder::new(0).build().is_err());
        assert!(TopologyBuilder::new(4).cpus_per_llc(3).build().is_err());
    }
}
