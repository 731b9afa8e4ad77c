//! Tick modes (issue 13): which CPUs the periodic tick hits, and the NOHZ
//! idle balancer that balances for CPUs whose tick is stopped.
//!
//! * `nohz=0`, HZ_PERIODIC: every online CPU ticks every jiffy.
//! * `nohz=1`, NO_HZ_IDLE (the default of 6.x distribution kernels and of
//!   our host): an idle CPU stops its tick (`tick_nohz_idle_stop_tick`,
//!   kernel/time/tick-sched.c) and restarts it on the jiffy grid when it
//!   leaves idle (`tick_nohz_restart`: the next period after now). With
//!   `idle_tick_retain` (default 1) the tick runs once more first: the
//!   first tick after idle entry is delivered (its periodic balance of the
//!   idle CPU included) and the tick stops after it. The kernel's
//!   `tick_nohz_next_event` keeps the tick for the next jiffy while
//!   `rcu_needs_cpu()` (RCU work left by the task that ran), and every host
//!   trace shows it: of the idle periods of 8 ms or more, 587 of 628 (16
//!   vCPUs, `dl16`) had exactly one tick and none had none. Departure: the
//!   kernel keeps it only while RCU needs the CPU; here always once.
//!   The idle balancer's targets are the idle CPUs past that tick (a CPU
//!   enters `nohz.idle_cpus_mask` only when its tick stops).
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

/// `Simulator::quiet_stale` bits: the CPU's own quiet horizon is stale.
pub(crate) const STALE_OWN: u8 = 1;
/// Its balancing's quiet horizon is stale.
pub(crate) const STALE_BALANCE: u8 = 2;
/// When its next private balancing pass is due (engine/private_balance.rs).
pub(crate) const STALE_PRIVATE: u8 = 4;
/// All of them.
pub(crate) const STALE_ALL: u8 = STALE_OWN | STALE_BALANCE | STALE_PRIVATE;

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
        name: "idle_tick_retain",
        default: 1,
        min: 0,
        max: 1,
        unit: "",
        doc: "with nohz=1: an idle CPU keeps its tick until the first tick after it went idle, which runs there (its periodic balance included), and stops it then; 0 = stopped at idle entry. Traced with every switch recorded (2-vCPU and 16-vCPU 6.18 VMs, DEADLINE tasks beside hogs): 229 of 320 and 587 of 628 idle periods of 4 and 8 ms or more had exactly one tick, none had none (tick_nohz_next_event keeps the tick a jiffy while RCU needs the CPU)",
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

/// The fewest tick slots [`Simulator::deliver_quiet_ticks`] delivers all
/// at once (`quiet_rest_of_jiffy`).
const MIN_BATCHED_SLOTS: u64 = 8;

impl Simulator {
    /// Whether `cpu`'s tick runs now.
    pub(crate) fn cpu_ticks(&self, cpu: CpuId) -> bool {
        if !self.m.online.contains(cpu) {
            return false;
        }
        let rq = &self.m.rqs[cpu];
        match self.tick_mode {
            TickMode::Periodic => true,
            TickMode::NohzIdle => !self.m.is_idle(cpu) || self.idle_tick_due.contains(cpu),
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
    /// `ticking` is [`Self::ticking_mask`] now.
    fn advance_tick(&mut self, at: Ns, cpu: CpuId, ticking: CpuSet) {
        // From the mask of ticking CPUs, not CPU by CPU (64 CPUs: the scan
        // was 4 % of a global-EDF run; issue 18).
        debug_assert_eq!(ticking, self.ticking_mask());
        self.next_tick = match ticking.first_from(cpu + 1) {
            Some(c) => (at, c),
            None => {
                if self.tick_mode != TickMode::Periodic && ticking.is_empty() {
                    self.tick_parked = true;
                    (Ns::MAX, 0)
                } else {
                    (super::exec::later(at, self.m.tick_ns()), 0)
                }
            }
        };
    }

    /// The tick slot at `t` is `cpu`'s: deliver it, and the next slots of
    /// the same jiffy while their ticks are quiet ([`Self::quiet_tick`]),
    /// each counted as the event it is, its idle-balance kick recorded as
    /// the pass would (one per jiffy) and its private passes run. The
    /// event loop would take them one by one just so: nothing else can
    /// come between two ticks of one instant (at equal times, segment ends
    /// and queued events come first) and a quiet tick adds nothing; here
    /// its other checks are not repeated for each (64 CPUs, where events
    /// come every jiffy so most ticks go this way: -7 % of the
    /// instructions). Each slot after the first takes one event of
    /// `budget`. Returns the CPU whose tick must run in full, or None when
    /// the jiffy's slots (or the budget) are done.
    #[inline(never)]
    pub(crate) fn deliver_quiet_ticks(
        &mut self,
        t: Ns,
        mut cpu: CpuId,
        budget: &mut u64,
    ) -> Option<CpuId> {
        // The ticking CPUs, the same across quiet ticks but for a
        // retained tick's CPU, whose tick stops (64 CPUs: computed at
        // every tick, 3 % of the instructions).
        let mut ticking = self.ticking_mask();
        // After the first slot, once: the rest of the jiffy at once. Not
        // before it: a fair task's tick (never quiet) ends the first slot,
        // and a machine of them should pay nothing for the attempt.
        let mut rest_at_once = true;
        loop {
            let ticks = ticking.contains(cpu);
            debug_assert_eq!(ticks, self.cpu_ticks(cpu));
            if ticks && self.m.is_idle(cpu) {
                // An idle CPU's retained tick: its last until it runs.
                self.idle_tick_due.remove(cpu);
                self.tick_stopped(cpu);
                ticking = self.ticking_mask();
            }
            self.advance_tick(t, cpu, ticking);
            // A stopped tick (NO_HZ) does nothing.
            if ticks {
                self.m.now = t;
                let Some(kicks) = self.quiet_tick(cpu) else {
                    return Some(cpu);
                };
                if kicks {
                    self.last_ilb = Some(t);
                }
                self.private_passes_at(cpu, t, kicks);
                self.m.stats.events += 1;
                self.quiet_skipped += 1;
            }
            let (next_at, next_cpu) = self.next_tick;
            if next_at != t || *budget == 0 {
                return None;
            }
            *budget -= 1;
            cpu = next_cpu;
            if std::mem::take(&mut rest_at_once) && self.quiet_rest_of_jiffy(t, cpu, budget) {
                return None;
            }
        }
    }

    /// [`Self::deliver_quiet_ticks`] for the common case, all at once: when
    /// the tick slot at `t` is `cpu`'s, every slot of the jiffy from it on
    /// is quiet and `budget` is enough for them all, deliver them (count
    /// them, stop the retained idle ticks among them, record the
    /// idle-balance kick, run the private passes due) and move the slot to
    /// the next jiffy; true if so, and false, having changed nothing,
    /// otherwise. The same as the slot-by-slot loop: each slot's quiet
    /// test reads its CPU's kept horizon and the stopped CPUs' (which grow
    /// by the retained ticks before it, as the loop's do, and which the
    /// private passes do not change: private classes are outside the
    /// horizons), so all are tested first; then the loop's effects are
    /// made, in an order that leaves the same state (below). Why: a quiet
    /// tick through the loop cost about 150 instructions (64 CPUs of
    /// DEADLINE jobs: a quarter of the run).
    fn quiet_rest_of_jiffy(&mut self, t: Ns, cpu: CpuId, budget: &mut u64) -> bool {
        // The slot's own CPU first: one whose tick must run ends it at once.
        if t >= self.own_quiet_until(cpu) && self.cpu_ticks(cpu) {
            return false;
        }
        let ticking = self.ticking_mask();
        let slots = ticking.from(cpu);
        let Some(last) = slots.last() else {
            return false;
        };
        // Its set operations cost about what the loop spends on three or
        // four slots (a 4-CPU machine paid 1 % more with it): only for a
        // longer rest of the jiffy.
        let n = slots.count() as u64;
        if n < MIN_BATCHED_SLOTS {
            return false;
        }
        let after = n - u64::from(slots.contains(cpu));
        if after > *budget {
            return false;
        }
        // Ticking idle CPUs: retained ticks, each its CPU's last (NO_HZ_IDLE;
        // under the other modes the loop takes them).
        let retained = slots.and(self.m.idle_cpus());
        let nohz_idle = self.tick_mode == TickMode::NohzIdle;
        if !retained.is_empty() && !nohz_idle {
            return false;
        }
        let (stopped, mut stopped_until) = match self.tick_mode {
            TickMode::Periodic => (CpuSet::empty(), Ns::MAX),
            _ => self.stopped_quiet_until(),
        };
        // The stopped CPUs as the loop would see them at each slot: those
        // stopped now (none of them ticks) and the retained ticks before it
        // (its own counted in).
        debug_assert!(!stopped.intersects(&slots));
        let mut nr_stopped = stopped.count();
        let (mut kicker, mut due) = (None, CpuSet::empty());
        let private = self.private.classes != 0;
        for c in slots.iter() {
            let stops = retained.contains(c);
            if stops {
                nr_stopped += 1;
                stopped_until = stopped_until.min(self.kept_balance_quiet_until(c));
            }
            if t >= self.own_quiet_until(c) {
                return false;
            }
            let targets = nr_stopped > usize::from(stops);
            if targets && (kicker.is_none() || t >= stopped_until) && self.kicks_when_targets(c) {
                if t >= stopped_until {
                    return false;
                }
                kicker = kicker.or(Some(c));
            }
            if private && self.private_due(c) <= t {
                due.insert(c);
            }
        }
        // Every slot is quiet: deliver them. The loop's effects, in an
        // order that makes the same state: each retained tick stops (before
        // its CPU's passes, as at its slot), the passes due run (each CPU's
        // once at this jiffy whichever slot runs it; they commute), the
        // kicking slot's pass of the stopped CPUs last (those that ran
        // their own pass at their slot have none left).
        self.m.now = t;
        if !retained.is_empty() {
            for c in retained.iter() {
                self.idle_tick_due.remove(c);
                self.tick_stopped(c);
            }
        }
        if !due.is_empty() {
            for c in due.iter() {
                self.private_passes_at(c, t, false);
            }
        }
        if let Some(k) = kicker.filter(|_| self.last_ilb != Some(t)) {
            self.last_ilb = Some(t);
            self.private_passes_at(k, t, true);
        }
        self.m.stats.events += n;
        self.quiet_skipped += n;
        *budget -= after;
        self.advance_tick(t, last, self.ticking_mask());
        true
    }

    /// Restart the parked tick on the jiffy grid once a CPU needs it.
    pub(crate) fn unpark_tick(&mut self) {
        if !self.tick_parked || self.ticking_mask().is_empty() {
            return;
        }
        self.tick_parked = false;
        self.next_tick = (self.m.next_tick_after(self.m.now), 0);
    }

    /// The NOHZ idle balancer, from the tick of busy `cpu`.
    pub(crate) fn nohz_idle_balance(&mut self, cpu: CpuId) {
        let Some(stopped) = self.ilb_targets_at(cpu, self.m.now) else {
            return;
        };
        self.last_ilb = Some(self.m.now);
        for c in stopped.iter() {
            self.quiet_touch(c);
            for k in 0..self.classes.len() {
                self.classes.get(k).tick_balance(&mut self.m, c);
            }
        }
    }

    /// Quiet ticks (a simulator shortcut, no kernel counterpart: the
    /// kernel's tick runs): until when the ticks of busy `cpu` would change
    /// nothing at all if nothing else happens, so that the event loop counts
    /// them and goes on. Every part of `Simulator::tick` and what follows it
    /// must be quiet: no deadline server, the current task's class tick
    /// (`SchedClass::task_tick_quiet_until`: e.g. a SCHED_DEADLINE job under
    /// EDF while it has runtime left, at full speed), every class's
    /// balancing of `cpu` and, when its tick kicks the idle balancer, of
    /// every CPU the pass would cover (`tick_balance_quiet_until`: until
    /// the next balance is due), and no sleep timer expiring on `cpu`. A
    /// fair task's tick is never quiet (its slice, its preemption check and
    /// PELT). 0 when the tick must run. Exact by the hooks' contract:
    /// tests/quiet_ticks.rs runs workloads both ways and compares.
    ///
    /// Made of the CPU's own part (kept until the CPU is touched) and the
    /// idle balancer's, which depends on every CPU's idle state. The idle
    /// balancer's targets count whenever this CPU's tick would kick it,
    /// whether or not another CPU kicked it in the same jiffy: a horizon
    /// that is short only makes a tick run in full.
    pub(crate) fn quiet_until(&mut self, cpu: CpuId) -> Ns {
        self.quiet_horizon(cpu).0
    }

    /// ([`Self::quiet_until`], whether the tick of `cpu` kicks the idle
    /// balancer when none ran yet in its jiffy): the stopped CPUs and the
    /// kick are read once for both. A retained idle tick's CPU is stopped
    /// from its tick on; it is not its own target.
    #[inline]
    fn quiet_horizon(&mut self, cpu: CpuId) -> (Ns, bool) {
        let until = self.own_quiet_until(cpu);
        if until == 0 || self.tick_mode == TickMode::Periodic {
            return (until, false);
        }
        let (mut stopped, stopped_until) = self.stopped_quiet_until();
        debug_assert_eq!(stopped, self.stopped_cpus());
        stopped.remove(cpu);
        if stopped.is_empty() || !self.kicks_when_targets(cpu) {
            return (until, false);
        }
        (until.min(stopped_until), true)
    }

    /// `cpu`'s state may have changed (its run queue, its current task, a
    /// class's state for it, its timers, its rate): the part of its quiet
    /// horizon that only its own state decides is computed afresh when next
    /// asked. Called by the engine before it changes any of that or calls a
    /// class hook for `cpu` (or for a task on it). Why per CPU: the
    /// horizon was recomputed for every ticking CPU after every handled
    /// event, though most events change one or two CPUs (issue 18: 30 % of
    /// the 64-CPU global-EDF set). Builds with debug assertions (the
    /// tests) check every horizon kept this way against a fresh one.
    #[inline]
    pub(crate) fn quiet_touch(&mut self, cpu: CpuId) {
        self.quiet_stale[cpu] = STALE_ALL;
    }

    /// Every CPU's state may have changed (a caller between runs, hotplug,
    /// the quiet-tick switch): see [`Self::quiet_touch`].
    pub(crate) fn quiet_touch_all(&mut self) {
        self.quiet_stale.fill(STALE_ALL);
    }

    /// The part of `cpu`'s quiet horizon that its own state decides
    /// ([`Self::local_quiet_horizon`]), kept until `cpu` is touched.
    #[inline(always)]
    fn own_quiet_until(&mut self, cpu: CpuId) -> Ns {
        if self.quiet_stale[cpu] & STALE_OWN == 0 {
            let kept = self.quiet_local[cpu];
            debug_assert_eq!(
                kept,
                self.local_quiet_horizon(cpu),
                "cpu {cpu}: a quiet horizon kept past a change of its state at {}",
                self.m.now
            );
            return kept;
        }
        self.renew_own_quiet_until(cpu)
    }

    /// [`Self::own_quiet_until`] computed afresh and kept.
    #[inline]
    fn renew_own_quiet_until(&mut self, cpu: CpuId) -> Ns {
        let (fresh, private) = self.local_quiet_horizons(cpu);
        self.quiet_local[cpu] = fresh;
        self.quiet_stale[cpu] &= !STALE_OWN;
        if let Some(due) = private {
            self.keep_private_due(cpu, due);
        }
        fresh
    }

    /// The part of `cpu`'s quiet horizon that its own state decides: its
    /// current task's class tick, every class's balancing of `cpu`, its
    /// sleep timers, and the run's switches (no server, quiet ticks on).
    fn local_quiet_horizon(&self, cpu: CpuId) -> Ns {
        self.local_quiet_horizons(cpu).0
    }

    /// [`Self::local_quiet_horizon`], and when the balancing was asked for
    /// it, when the CPU's next private balancing pass is due.
    fn local_quiet_horizons(&self, cpu: CpuId) -> (Ns, Option<Ns>) {
        // A pending clock-update skip takes the tick's time (touch_rq_clock).
        if !self.quiet_ticks
            || self.classes.server.is_some()
            || self.m.rqs[cpu].clock_skip_req.is_some()
        {
            return (0, None);
        }
        let m = &self.m;
        let until = match m.rqs[cpu].curr {
            Some(t) => self
                .classes
                .get_ref(self.class_of(t))
                .task_tick_quiet_until(m, cpu, t),
            None => Ns::MAX,
        };
        if until == 0 {
            return (0, None);
        }
        let (balance, private) = self.balance_horizons(cpu);
        let until = until.min(balance).min(self.slack_timers.next_soft(cpu));
        (until, Some(private))
    }

    /// Until when every class's balancing of `cpu` stays quiet
    /// (`SchedClass::tick_balance_quiet_until`). A class whose passes are
    /// private now counts as quiet: the engine runs its passes at the
    /// skipped ticks (engine/private_balance.rs).
    fn balance_quiet_until(&self, cpu: CpuId) -> Ns {
        self.balance_horizons(cpu).0
    }

    /// ([`Self::balance_quiet_until`], when the next private pass is due)
    /// of `cpu`: the classes' `tick_balance_quiet_until`, non-private and
    /// private apart, asked once.
    pub(crate) fn balance_horizons(&self, cpu: CpuId) -> (Ns, Ns) {
        let (mut quiet, mut private) = (Ns::MAX, Ns::MAX);
        for k in 0..self.classes.len() {
            let until = self
                .classes
                .get_ref(k)
                .tick_balance_quiet_until(&self.m, cpu);
            if self.balance_is_private(k) {
                private = private.min(until);
            } else {
                quiet = quiet.min(until);
            }
        }
        (quiet, private)
    }

    /// The CPUs whose tick is stopped (the idle balancer's targets) and
    /// until when the balancing of every one of them stays quiet: the
    /// least of their [`Self::balance_quiet_until`]. Every ticking CPU
    /// that kicks the idle balancer kicks it for the same CPUs (its own
    /// tick is not stopped), so this is computed once per state
    /// generation, from each stopped CPU's balance horizon kept until that
    /// CPU is touched (64 CPUs: the global-EDF anchor spent a tenth of its
    /// time here, then a third in the quiet horizons; issue 18).
    #[inline(always)]
    fn stopped_quiet_until(&mut self) -> (CpuSet, Ns) {
        let (gen, stopped, until) = self.ilb_quiet_cache;
        if gen == self.state_gen {
            return (stopped, until);
        }
        self.renew_stopped_quiet_until()
    }

    /// [`Self::stopped_quiet_until`] computed afresh and kept.
    #[inline(never)]
    fn renew_stopped_quiet_until(&mut self) -> (CpuSet, Ns) {
        let (_, kept_set, kept_until) = self.ilb_quiet_cache;
        let (stopped, until) = self.least_over_stopped(
            Some((kept_set, kept_until)),
            STALE_BALANCE,
            Self::kept_balance_quiet_until,
        );
        self.ilb_quiet_cache = (self.state_gen, stopped, until);
        (stopped, until)
    }

    /// The stopped CPUs and the least of `kept` over them. `last` is the
    /// last such answer: the same CPUs, none of them with a `stale` bit
    /// set since, give it again (their kept values are the ones it was
    /// made of).
    #[inline(always)]
    pub(crate) fn least_over_stopped(
        &mut self,
        last: Option<(CpuSet, Ns)>,
        stale: u8,
        kept: impl Fn(&mut Self, CpuId) -> Ns,
    ) -> (CpuSet, Ns) {
        let stopped = self.stopped_cpus();
        if let Some((last_set, last_least)) = last {
            let untouched = |c: CpuId| self.quiet_stale[c] & stale == 0;
            if last_set == stopped && stopped.iter().all(untouched) {
                return (stopped, last_least);
            }
        }
        let mut least = Ns::MAX;
        for c in stopped.iter() {
            least = least.min(kept(self, c));
        }
        (stopped, least)
    }

    /// `cpu`'s retained idle tick ran and its tick stops, without a
    /// handled event (so within one state generation): it joins the
    /// stopped CPUs of the kept idle-balancer horizons, which a quiet tick
    /// later in the generation reads (a retained tick can be quiet).
    pub(crate) fn tick_stopped(&mut self, cpu: CpuId) {
        if self.ilb_quiet_cache.0 == self.state_gen {
            let until = self.kept_balance_quiet_until(cpu);
            let cache = &mut self.ilb_quiet_cache;
            cache.1.insert(cpu);
            cache.2 = cache.2.min(until);
        }
        self.private_tick_stopped(cpu);
    }

    /// [`Self::balance_quiet_until`] of `cpu`, kept until it is touched.
    fn kept_balance_quiet_until(&mut self, cpu: CpuId) -> Ns {
        if self.quiet_stale[cpu] & STALE_BALANCE == 0 {
            let kept = self.balance_kept[cpu];
            debug_assert_eq!(
                kept,
                self.balance_quiet_until(cpu),
                "cpu {cpu}: a balance horizon kept past a change of its state at {}",
                self.m.now
            );
            return kept;
        }
        let (fresh, private) = self.balance_horizons(cpu);
        self.balance_kept[cpu] = fresh;
        self.quiet_stale[cpu] &= !STALE_BALANCE;
        self.keep_private_due(cpu, private);
        fresh
    }

    /// Whether the tick of `cpu` now is quiet ([`Self::quiet_until`]):
    /// Some(kicks), `kicks` telling whether it kicks the idle balancer (its
    /// pass would find nothing due): [`Self::ilb_targets_at`] from the same
    /// reading of the stopped CPUs ([`Self::quiet_horizon`]; every quiet
    /// tick of a jiffy asks, 64 CPUs).
    #[inline]
    pub(crate) fn quiet_tick(&mut self, cpu: CpuId) -> Option<bool> {
        let now = self.m.now;
        let (until, kicks) = self.quiet_horizon(cpu);
        if now >= until {
            return None;
        }
        let kicks = kicks && self.last_ilb != Some(now);
        debug_assert_eq!(kicks, self.ilb_targets_at(cpu, now).is_some());
        Some(kicks)
    }

    /// Whole jiffies of quiet ticks from the jiffy at `at` (none of its
    /// ticks delivered yet): every ticking CPU quiet until past them, and
    /// no other event at or before them (at equal times other events come
    /// first) nor past `limit`, and some CPU ticking (with none, the tick
    /// parks and restarts on the grid after the next event). Returns
    /// (jiffies, ticks) to count as delivered, or None. Nothing changes
    /// across them, so the ticking CPUs and each one's answer stay the
    /// same.
    pub(crate) fn quiet_jiffies(&mut self, at: Ns, limit: Ns) -> Option<(u64, u64)> {
        let tick = self.m.tick_ns().max(1);
        let second = at.saturating_add(tick);
        // The next event first: with events every jiffy or so (64 CPUs of
        // DEADLINE jobs) it ends most tries before any CPU is asked.
        let mut bound = limit.saturating_add(1);
        if let Some((t, _)) = self.seg_ends.earliest() {
            bound = bound.min(t);
        }
        if let Some(t) = self.events.peek_time() {
            bound = bound.min(t);
        }
        if bound <= second {
            return None;
        }
        let Some(ticking) = self.ticking_cpus() else {
            return None; // a retained idle tick: the ticking set changes after it
        };
        // The least of the ticking CPUs' horizons (`quiet_until`), read
        // from their kept own parts: the idle balancer's part is the same
        // for every CPU that kicks it (its targets are the stopped CPUs,
        // none of them ticking), so it joins once if any of them kicks.
        // A fair task's tick (never quiet) ends it at once.
        let (mut end, mut kicks) = (Ns::MAX, false);
        for c in ticking.iter() {
            end = end.min(self.own_quiet_until(c));
            if end <= second {
                return None; // not even two jiffies: the per-tick path
            }
            kicks = kicks || self.kicks_when_targets(c);
        }
        let nr_ticking = ticking.count() as u64;
        if nr_ticking == 0 {
            return None; // the per-tick path parks the tick (`advance_tick`)
        }
        if kicks && self.tick_mode != TickMode::Periodic {
            let (stopped, stopped_until) = self.stopped_quiet_until();
            if !stopped.is_empty() {
                end = end.min(stopped_until);
            }
        }
        debug_assert_eq!(
            end.max(second),
            ticking
                .iter()
                .map(|c| self.quiet_until(c))
                .min()
                .unwrap_or(Ns::MAX)
                .max(second),
            "quiet jiffies at {at}: the ticking CPUs' least horizon"
        );
        end = end.min(bound);
        if end <= second {
            return None;
        }
        let jiffies = (end - at).div_ceil(tick);
        Some((jiffies, jiffies * nr_ticking))
    }

    /// The CPUs whose tick runs now ([`Self::cpu_ticks`]).
    fn ticking_mask(&self) -> CpuSet {
        let online = self.m.online;
        let mask = match self.tick_mode {
            TickMode::Periodic => online,
            TickMode::NohzIdle => {
                let stopped = online.and(self.m.idle_cpus()).and_not(&self.idle_tick_due);
                online.and_not(&stopped)
            }
            TickMode::NohzFull => {
                let mut s = CpuSet::empty();
                for c in (0..self.m.nr_cpus()).filter(|c| self.cpu_ticks(*c)) {
                    s.insert(c);
                }
                s
            }
        };
        debug_assert!((0..self.m.nr_cpus()).all(|c| mask.contains(c) == self.cpu_ticks(c)));
        mask
    }

    /// The CPUs whose tick runs now ([`Self::cpu_ticks`]), or None when
    /// one of them is an idle CPU's retained tick (NO_HZ_IDLE).
    fn ticking_cpus(&self) -> Option<CpuSet> {
        let online = self.m.online;
        match self.tick_mode {
            TickMode::Periodic => Some(online),
            TickMode::NohzIdle => {
                let idle = online.and(self.m.idle_cpus());
                if idle.intersects(&self.idle_tick_due) {
                    return None;
                }
                Some(online.and_not(&idle))
            }
            TickMode::NohzFull => {
                let mut s = CpuSet::empty();
                for c in (0..self.m.nr_cpus()).filter(|c| self.cpu_ticks(*c)) {
                    s.insert(c);
                }
                Some(s)
            }
        }
    }

    /// The online CPUs whose tick is stopped: the idle balancer's targets
    /// ([`Self::ilb_kick_targets`] for a CPU outside them).
    #[inline]
    pub(crate) fn stopped_cpus(&self) -> CpuSet {
        if self.tick_mode == TickMode::NohzIdle {
            self.m
                .online
                .and(self.m.idle_cpus())
                .and_not(&self.idle_tick_due)
        } else {
            let mut s = CpuSet::empty();
            for c in (0..self.m.nr_cpus()).filter(|c| self.m.online.contains(*c)) {
                if !self.cpu_ticks(c) {
                    s.insert(c);
                }
            }
            s
        }
    }

    /// Whether the tick of `cpu` kicks the idle balancer when there are
    /// stopped CPUs: it has two tasks or its LLC two busy CPUs.
    #[inline]
    fn kicks_when_targets(&self, cpu: CpuId) -> bool {
        self.m.rqs[cpu].nr_running >= 2
            || self.m.topo.llc(cpu).and_not(self.m.idle_cpus()).has_two()
    }

    /// Count `ticks` quiet ticks over `jiffies` whole jiffies from `at`
    /// ([`Self::quiet_jiffies`]) as delivered and move the tick slot past
    /// them; the idle-balance kick of the last of them is recorded as its
    /// first kicking tick would have. The private balancing passes they
    /// would have run are run: the ticking CPUs' at every jiffy, the
    /// stopped CPUs' at every jiffy when a tick kicks the idle balancer
    /// (the same CPUs tick, and the same ones kick, at each of them).
    pub(crate) fn skip_quiet_jiffies(&mut self, at: Ns, jiffies: u64, ticks: u64) {
        let last = at + (jiffies - 1) * self.m.tick_ns().max(1);
        let kicks = (0..self.m.nr_cpus())
            .any(|c| self.cpu_ticks(c) && self.ilb_targets_at(c, last).is_some());
        if kicks {
            self.last_ilb = Some(last);
        }
        if self.private.classes != 0 {
            let ticking = self.ticking_mask();
            self.private_passes_of(ticking, at, last);
            if kicks {
                self.private_passes_of(self.stopped_cpus(), at, last);
            }
        }
        self.m.stats.events += ticks;
        self.quiet_skipped += ticks;
        self.next_tick = (super::exec::later(last, self.m.tick_ns()), 0);
    }

    /// The CPUs the tick of `cpu` at `now` kicks an idle-balance pass for,
    /// or None when it kicks none (one pass per jiffy).
    #[inline(always)]
    pub(crate) fn ilb_targets_at(&self, cpu: CpuId, now: Ns) -> Option<CpuSet> {
        if self.last_ilb == Some(now) {
            return None;
        }
        self.ilb_kick_targets(cpu)
    }

    /// The CPUs a tick of `cpu` would kick an idle-balance pass for if none
    /// ran yet in its jiffy, or None.
    #[inline(always)]
    fn ilb_kick_targets(&self, cpu: CpuId) -> Option<CpuSet> {
        if self.tick_mode == TickMode::Periodic {
            return None;
        }
        // The other online CPUs whose tick is stopped, as a mask (this
        // runs at every tick of every CPU: no allocation; under NO_HZ_IDLE
        // the idle CPUs, from the machine's idle mask).
        let mut stopped = self.stopped_cpus();
        stopped.remove(cpu);
        if stopped.is_empty() || !self.kicks_when_targets(cpu) {
            return None;
        }
        Some(stopped)
    }
}
