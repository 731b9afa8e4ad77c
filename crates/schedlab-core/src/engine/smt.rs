//! SMT throughput (shootout.md §6.3, issue 13): the hardware threads of a
//! core share its execution resources. A task whose sibling thread is idle
//! runs at full speed; while a sibling also runs a task, each runs at
//! `smt_speed_pct` % (default 60: the core gives 1.2× one thread, within
//! the 0–40 % SMT yields reported for real workloads; the kernel's own old
//! estimate was +15 %, `smt_gain` 1178 before v4.20). Only `run` work
//! slows down; `runtime` (wall-clock) and the wakeup path's fixed costs do
//! not. Machines without SMT (`--smt 1`) are unaffected.
//!
//! When a CPU goes from idle to busy or back, its siblings' running
//! segments are settled at the old speed and re-timed at the new one, as a
//! frequency change re-times them (governor.rs `set_freq`).

use super::Simulator;
use crate::cpuset::{CpuId, CpuSet};
use crate::tunable::Tunable;

/// The SMT tunable (an engine tunable).
pub const SMT_TUNABLES: &[Tunable] = &[Tunable {
    name: "smt_speed_pct",
    default: 60,
    min: 1,
    max: 100,
    unit: "%",
    doc: "speed of a hardware thread while its SMT sibling also runs a task, % of running alone (shootout.md 6.3: 60, i.e. a core yields 1.2x one thread; 100 = no SMT penalty)",
}];

impl Simulator {
    /// Whether SMT siblings can slow anything on this machine: not while
    /// `smt_speed_pct` is 100, nor where every core has one thread.
    fn smt_slows(&self) -> bool {
        self.smt_pct != 100 && self.m.topo.has_smt()
    }

    /// Whether `s` is a sibling of `cpu` other than itself that runs a
    /// task now.
    fn runs_beside(&self, cpu: CpuId, s: CpuId) -> bool {
        s != cpu && self.m.rqs[s].curr.is_some()
    }

    /// The SMT speed factor of `cpu` now: (numerator, denominator).
    pub(crate) fn smt_factor(&self, cpu: CpuId) -> (u128, u128) {
        // `any`, not the set of busy siblings: this runs at every work
        // rate asked (building the set cost seed 002's jitter run 4 %).
        let slowed = self.smt_slows()
            && self
                .m
                .topo
                .siblings(cpu)
                .iter()
                .any(|s| self.runs_beside(cpu, s));
        if slowed {
            (self.smt_pct as u128, 100)
        } else {
            (1, 1)
        }
    }

    /// Before `cpu`'s busy state changes: account its siblings' work at
    /// the speed they had. Returns the siblings to re-time afterwards (a
    /// set, not a vector: this runs at every switch to or from idle, and
    /// a vector of them was an allocation each time on an SMT machine).
    pub(crate) fn smt_settle_siblings(&mut self, cpu: CpuId) -> CpuSet {
        let mut busy = CpuSet::empty();
        if !self.smt_slows() {
            return busy;
        }
        for s in self.m.topo.siblings(cpu).iter() {
            if self.runs_beside(cpu, s) {
                self.settle(s);
                busy.insert(s);
            }
        }
        busy
    }

    /// After the change: re-time the siblings' segments at the new speed.
    pub(crate) fn smt_retime(&mut self, sibs: CpuSet) {
        for s in sibs.iter() {
            self.retime_segment(s);
        }
    }
}
