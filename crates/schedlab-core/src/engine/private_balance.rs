//! Private balancing passes (a simulator shortcut, no kernel counterpart):
//! the periodic balancing that a quiet tick would otherwise stop at, run
//! without the tick.
//!
//! On a machine of RT or DEADLINE tasks the fair class still balances
//! every busy CPU at each busy interval, and every tick-stopped CPU through
//! the idle balancer; each such pass finds nothing to pull and only moves
//! the CPU's next balance. As a quiet-tick horizon (nohz.rs) those passes
//! cut every quiet stretch short, and each one cost a full tick (issue 18:
//! 10,211 of the global-EDF anchor's 20,845 handled events were such
//! ticks; with this shortcut 18 % fewer instructions, the 64-CPU set,
//! whose events come every jiffy anyway, 1 % more). A class whose passes
//! are private
//! (`SchedClass::tick_balance_private`: they change nothing but its own
//! per-CPU bookkeeping, and passes of different CPUs commute) leaves its
//! balancing out of the quiet horizons, and the engine runs the passes the
//! skipped ticks would have run itself: for each CPU whose tick was
//! skipped, at every one of those jiffies where the pass is due
//! (`tick_balance_quiet_until`), in time order; for the tick-stopped CPUs,
//! at the jiffies whose ticks kicked the idle balancer. Exact by the hook's
//! contract: tests/quiet_ticks.rs runs workloads with fair tasks coming
//! and going beside DEADLINE tasks with quiet ticks and with every tick in
//! full, and compares the bytes and the classes' balancing state every
//! 10 ms (`SchedClass::balance_state_digest`); leaving out any one of the
//! four places that run passes makes it fail.

use super::nohz::STALE_PRIVATE;
use super::Simulator;
use crate::clock::Ns;
use crate::cpuset::{CpuId, CpuSet};

/// While no class's passes are private, the classes are asked after every
/// this many handled events ([`Simulator::refresh_private_balance`]).
const PRIVATE_ASK_EVERY: u64 = 32;

/// The class indices whose bits are set in `mask`, lowest first.
fn class_bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let k = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            k
        })
    })
}

/// The engine's state for private passes.
pub(crate) struct PrivateBalance {
    /// Bit k: class k's balancing passes are private, as asked after the
    /// last handled event.
    pub(crate) classes: u64,
    /// (stack length, bits): the classes whose passes may ever be private
    /// (`SchedClass::tick_balance_may_be_private`), asked again only when
    /// the stack changes.
    candidates: (usize, u64),
    /// (generation, stopped CPUs, least private due among them): as
    /// `ilb_quiet_cache`, for the idle balancer's private passes.
    stopped_cache: (u64, CpuSet, Ns),
    /// Per CPU, when its next private pass is due, valid while its
    /// `quiet_stale` has no `STALE_PRIVATE`.
    kept: Vec<Ns>,
}

impl PrivateBalance {
    pub(crate) fn new(cpus: usize) -> Self {
        PrivateBalance {
            classes: 0,
            candidates: (usize::MAX, 0),
            stopped_cache: (u64::MAX, CpuSet::empty(), 0),
            kept: vec![0; cpus],
        }
    }
}

impl Simulator {
    /// The classes' balancing bookkeeping, digested
    /// (`SchedClass::balance_state_digest`): tests compare it between runs
    /// with quiet ticks and with every tick in full.
    pub fn balance_state_digest(&self) -> Vec<u64> {
        self.classes
            .iter()
            .map(|c| c.balance_state_digest())
            .collect()
    }

    /// After a handled event: ask the classes again whether their
    /// balancing passes are private now ([`Self::ask_private_balance`]).
    /// While one is, after every event: a class whose passes stop being
    /// private must have them run in full from the next tick on. While
    /// none is, after every `PRIVATE_ASK_EVERY`th event only: noticing
    /// late that passes became private only runs a few more of them in
    /// full ticks, and asking after every event cost fair-class workloads
    /// 1-2 % of their instructions (issue 18).
    #[inline]
    pub(crate) fn refresh_private_balance(&mut self) {
        if self.private.classes == 0 && self.state_gen % PRIVATE_ASK_EVERY != 0 {
            return;
        }
        self.ask_private_balance();
    }

    /// Ask the classes whether their balancing passes are private now;
    /// when the answer changes, every kept quiet horizon is stale (a
    /// private class's balancing is left out of them, and privacy may
    /// depend on any CPU's state).
    #[inline(never)]
    pub(crate) fn ask_private_balance(&mut self) {
        let n = self.classes.len().min(64);
        if self.private.candidates.0 != n {
            let may = (0..n)
                .filter(|k| self.classes.get_ref(*k).tick_balance_may_be_private())
                .fold(0u64, |m, k| m | 1 << k);
            self.private.candidates = (n, may);
        }
        let mut mask = 0u64;
        if self.quiet_ticks {
            for k in class_bits(self.private.candidates.1) {
                if self.classes.get_ref(k).tick_balance_private(&self.m) {
                    mask |= 1 << k;
                }
            }
        }
        if mask != self.private.classes {
            self.private.classes = mask;
            self.quiet_touch_all();
        }
    }

    /// Whether class `k`'s balancing passes are private now (as last
    /// asked by [`Self::refresh_private_balance`]).
    #[inline]
    pub(crate) fn balance_is_private(&self, k: usize) -> bool {
        k < 64 && self.private.classes & (1 << k) != 0
    }

    /// When a private pass is next due on `cpu` (the least of the private
    /// classes' `tick_balance_quiet_until`), kept until `cpu` is touched or
    /// a pass runs.
    #[inline(always)]
    pub(crate) fn private_due(&mut self, cpu: CpuId) -> Ns {
        if self.quiet_stale[cpu] & STALE_PRIVATE == 0 {
            let kept = self.private.kept[cpu];
            debug_assert_eq!(
                kept,
                self.fresh_private_due(cpu),
                "cpu {cpu}: kept private due"
            );
            return kept;
        }
        self.renew_private_due(cpu)
    }

    /// [`Self::private_due`] computed afresh and kept.
    #[inline(never)]
    fn renew_private_due(&mut self, cpu: CpuId) -> Ns {
        let fresh = self.fresh_private_due(cpu);
        self.keep_private_due(cpu, fresh);
        fresh
    }

    /// Keep `due`, computed afresh (also beside the quiet horizons, which
    /// ask every class's balancing anyway: nohz.rs `balance_horizons`).
    #[inline]
    pub(crate) fn keep_private_due(&mut self, cpu: CpuId, due: Ns) {
        self.private.kept[cpu] = due;
        self.quiet_stale[cpu] &= !STALE_PRIVATE;
    }

    /// As `balance_horizons(cpu).1` (nohz.rs), asking the private
    /// classes only.
    fn fresh_private_due(&self, cpu: CpuId) -> Ns {
        class_bits(self.private.classes)
            .map(|k| {
                self.classes
                    .get_ref(k)
                    .tick_balance_quiet_until(&self.m, cpu)
            })
            .min()
            .unwrap_or(Ns::MAX)
    }

    /// The private passes that the tick of `cpu` at `t`, counted quiet,
    /// would have run: its own, and when it kicks the idle balancer
    /// (`kicks`), those of the other tick-stopped CPUs.
    #[inline(always)]
    pub(crate) fn private_passes_at(&mut self, cpu: CpuId, t: Ns, kicks: bool) {
        if self.private.classes == 0 {
            return;
        }
        // Most quiet ticks have no pass due: answered from the kept due
        // without a call (64 CPUs: every CPU's tick, every jiffy).
        if self.private_due(cpu) <= t {
            self.private_passes(cpu, t, t);
        }
        if kicks {
            let (mut stopped, due) = self.stopped_private_due();
            if due <= t {
                stopped.remove(cpu);
                self.private_passes_of(stopped, t, t);
            }
        }
    }

    /// `cpu`'s tick stopped (its retained idle tick ran) without a
    /// handled event: it joins the kept stopped CPUs of this generation.
    pub(crate) fn private_tick_stopped(&mut self, cpu: CpuId) {
        if self.private.classes != 0 && self.private.stopped_cache.0 == self.state_gen {
            let due = self.private_due(cpu);
            let cache = &mut self.private.stopped_cache;
            cache.1.insert(cpu);
            cache.2 = cache.2.min(due);
        }
    }

    /// The tick-stopped CPUs and the least of their private dues, kept for
    /// the state's generation (a kicking tick asks at every jiffy; 64
    /// CPUs). As `renew_stopped_quiet_until`: the same CPUs, none touched
    /// and no pass run since, give the same answer.
    fn stopped_private_due(&mut self) -> (CpuSet, Ns) {
        let (gen, kept_set, kept_due) = self.private.stopped_cache;
        if gen == self.state_gen {
            return (kept_set, kept_due);
        }
        // After passes ran (generation u64::MAX) the last answer is stale.
        let last = (gen != u64::MAX).then_some((kept_set, kept_due));
        let (stopped, due) = self.least_over_stopped(last, STALE_PRIVATE, Self::private_due);
        self.private.stopped_cache = (self.state_gen, stopped, due);
        (stopped, due)
    }

    /// The private passes of every CPU of `cpus` at the jiffies from
    /// `first` to `last`.
    pub(crate) fn private_passes_of(&mut self, cpus: CpuSet, first: Ns, last: Ns) {
        if self.private.classes == 0 {
            return;
        }
        for c in cpus.iter() {
            self.private_passes(c, first, last);
        }
        self.private.stopped_cache.0 = u64::MAX;
    }

    /// Run the private passes due on `cpu` at the jiffies from `first` to
    /// `last` (on the tick grid), each at its jiffy's time, in order.
    #[inline(never)]
    fn private_passes(&mut self, cpu: CpuId, first: Ns, last: Ns) {
        let tick = self.m.tick_ns().max(1);
        let now = self.m.now;
        loop {
            let due = self.private_due(cpu);
            if due > last {
                break;
            }
            // The first jiffy at or after the due time.
            let at = if due <= first {
                first
            } else {
                first + (due - first).div_ceil(tick) * tick
            };
            if at > last {
                break;
            }
            self.m.now = at;
            for k in class_bits(self.private.classes) {
                self.classes.get(k).tick_balance(&mut self.m, cpu);
            }
            self.quiet_stale[cpu] |= STALE_PRIVATE;
            debug_assert!(
                self.private_due(cpu) > at,
                "cpu {cpu}: a private pass at {at} left itself due"
            );
        }
        self.m.now = now;
    }
}
