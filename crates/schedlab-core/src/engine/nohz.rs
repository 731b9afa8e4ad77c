//! Tick modes (issue 13): which CPUs the periodic tick hits, and the NOHZ
//! idle balancer that balances for CPUs whose tick is stopped.
//!
//! * `nohz=0`, HZ_PERIODIC: every online CPU ticks every jiffy.
//! * `nohz=1`, NO_HZ_IDLE (the default of 6.x distribution kernels and of
//!   our host): an idle CPU stops its tick (`tick_nohz_idle_stop_tick`,
//!   kernel/time/tick-sched.c) and restarts it on the jiffy grid when it
//!   leaves idle (`tick_nohz_restart`: the next period after now).
//! * `nohz=2`, NO_HZ_FULL on every CPU: a CPU with at most one runnable
//!   task also stops its tick (`sched_can_stop_tick`, kernel/sched/core.c
//!   v6.12: not with SCHED_DEADLINE tasks or two or more runnable tasks).
//!   Departures: no residual 1 Hz tick, no housekeeping CPU kept ticking.
//!
//! Idle CPUs balance through the NOHZ idle balancer (kernel/sched/fair.c
//! v6.12 `nohz_balancer_kick`, `_nohz_idle_balance`): the tick of a busy
//! CPU that has two or more runnable tasks, or shares its LLC with another
//! busy CPU, kicks one idle-load-balance pass per jiffy, which runs each
//! tick-stopped CPU's periodic balance (`SchedClass::tick_balance`; the
//! class's own per-CPU `next_balance` decides whether it is due).
//! Departures: no `nohz.next_balance` gate and no blocked-load (stats)
//! kicks; the pass runs in the kicking CPU's tick, at no cost, instead of
//! on an IPI'd idle CPU.

use super::Simulator;
use crate::clock::Ns;
use crate::cpuset::{CpuId, CpuSet};
use crate::tunable::Tunable;
use crate::workload::Policy;

/// The tick's tunables (engine tunables): its mode and its phase.
pub const NOHZ_TUNABLES: &[Tunable] = &[
    Tunable {
        name: "nohz",
        default: 1,
        min: 0,
        max: 2,
        unit: "",
        doc: "tick mode: 0 periodic on every CPU, 1 NO_HZ_IDLE (idle CPUs stop their tick; busy CPUs' ticks kick the idle load balancer for them), 2 NO_HZ_FULL on every CPU (a CPU with one runnable task stops its tick too)",
    },
    Tunable {
        name: "tick_phase_ns",
        default: 0,
        min: -1,
        max: 1_000_000_000,
        unit: "ns",
        doc: "where the jiffy grid sits relative to the run's start: ticks at this offset (modulo the tick period) plus whole periods; -1 draws it from the run's seed (a real machine's is arbitrary, shootout.md 5.4)",
    },
];

/// The tick phase of a run (`tick_phase_ns`), in `0..tick`: a negative
/// value draws it from the run's one RNG (the first draw of the run).
pub(crate) fn tick_phase(v: Option<i64>, tick: Ns, rng: &mut crate::rng::Rng) -> Ns {
    match v {
        Some(p) if p < 0 => rng.below(tick.max(1)),
        Some(p) => (p as Ns) % tick.max(1),
        None => 0,
    }
}

/// The tick mode of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TickMode {
    /// Every CPU ticks.
    #[default]
    Periodic,
    /// Idle CPUs do not tick.
    NohzIdle,
    /// CPUs with at most one runnable task do not tick.
    NohzFull,
}

impl TickMode {
    /// From the `nohz` tunable (absent: periodic, for custom test stacks).
    pub fn from_tunable(v: Option<i64>) -> TickMode {
        match v {
            Some(1) => TickMode::NohzIdle,
            Some(2) => TickMode::NohzFull,
            _ => TickMode::Periodic,
        }
    }
}

impl Simulator {
    /// Whether `cpu`'s tick runs now.
    pub(crate) fn cpu_ticks(&self, cpu: CpuId) -> bool {
        if !self.m.online.contains(cpu) {
            return false;
        }
        let rq = &self.m.rqs[cpu];
        match self.tick_mode {
            TickMode::Periodic => true,
            TickMode::NohzIdle => !self.m.is_idle(cpu),
            TickMode::NohzFull => {
                rq.nr_running > 1
                    || rq
                        .curr
                        .is_some_and(|t| self.m.tasks[t].policy == Policy::Deadline)
            }
        }
    }

    /// Move the tick slot past the tick just delivered to `cpu` at `at`:
    /// the next CPU of the same jiffy, else CPU 0 of the next jiffy (which
    /// CPUs tick is decided when the slot reaches them). With no CPU
    /// ticking at all the slot parks until one starts (`unpark_tick`).
    pub(crate) fn advance_tick(&mut self, at: Ns, cpu: CpuId) {
        let n = self.m.nr_cpus();
        let next = (cpu + 1..n).find(|c| self.cpu_ticks(*c));
        self.next_tick = match next {
            Some(c) => (at, c),
            None => {
                if self.tick_mode != TickMode::Periodic && !(0..n).any(|c| self.cpu_ticks(c)) {
                    self.tick_parked = true;
                    (Ns::MAX, 0)
                } else {
                    (super::exec::later(at, self.m.tick_ns()), 0)
                }
            }
        };
    }

    /// Restart the parked tick on the jiffy grid once a CPU needs it.
    pub(crate) fn unpark_tick(&mut self) {
        if !self.tick_parked || !(0..self.m.nr_cpus()).any(|c| self.cpu_ticks(c)) {
            return;
        }
        self.tick_parked = false;
        self.next_tick = (self.m.next_tick_after(self.m.now), 0);
    }

    /// The NOHZ idle balancer, from the tick of busy `cpu`.
    pub(crate) fn nohz_idle_balance(&mut self, cpu: CpuId) {
        if self.tick_mode == TickMode::Periodic || self.last_ilb == Some(self.m.now) {
            return;
        }
        // The other online CPUs whose tick is stopped, as a mask (this
        // runs at every tick of every CPU: no allocation).
        let mut stopped = CpuSet::empty();
        for c in (0..self.m.nr_cpus()).filter(|c| *c != cpu) {
            if self.m.online.contains(c) && !self.cpu_ticks(c) {
                stopped.insert(c);
            }
        }
        if stopped.is_empty() {
            return;
        }
        let llc = self.m.topo.llc(cpu);
        let busy_in_llc = llc.iter().filter(|c| !self.m.is_idle(*c)).count();
        if self.m.rqs[cpu].nr_running < 2 && busy_in_llc < 2 {
            return;
        }
        self.last_ilb = Some(self.m.now);
        for c in stopped.iter() {
            for k in 0..self.classes.len() {
                self.classes.get(k).tick_balance(&mut self.m, c);
            }
        }
    }
}
