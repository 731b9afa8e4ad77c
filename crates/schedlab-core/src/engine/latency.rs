//! The wakeup path's costs (shootout.md §5.1, issue 13): what lies between
//! `sched_waking` and the `sched_switch` that runs the wakee on a real
//! machine, and the preemption model that decides when a granted
//! preemption takes effect.
//!
//! * Timer slack (`timer_slack_ns`, hrtimer.c: `hrtimer_nanosleep` uses
//!   `current->timer_slack_ns`, 0 for RT/DL tasks via `rt_or_dl_task`): a
//!   sleeping SCHED_OTHER/BATCH/IDLE task's timer fires that much after the
//!   requested time (on a quiet CPU the hrtimer is programmed for the end of
//!   the slack window).
//! * Timer jitter (`timer_jitter_ns`, default 0): each sleep timer fires a
//!   uniform random 0..J late (the run's seeded RNG). Not a kernel rule but
//!   the machine's spread: without it every sleep cycle of a kind lasts
//!   exactly as long, and short sleepers sharing CPUs stay phase-locked
//!   apart forever (docs/model.md, "Wakeup costs").
//! * Wakeup cost (`wakeup_ns`): IRQ entry, `try_to_wake_up` and `__schedule`
//!   up to the switch, for a wakeup whose target reschedules.
//! * Spread (`wakeup_spread_pct`, `wakeup_tail_pct`): the three delays
//!   above are medians; each granted resched's delay is their sum times a
//!   seeded log-logistic factor whose p90 is the first percentage of the
//!   median and whose p99 is the second of its p90 (spread.rs: why that
//!   distribution; 0 = the median every time).
//! * Idle exit (`idle_exit_ns`): the target CPU was idle (halted vCPU or a
//!   C-state) and must wake first. The longer it has been idle, the more of
//!   it is paid (`idle_exit_ramp_ns`): a CPU idle for `d` pays
//!   `idle_exit_ns * min(d, ramp) / ramp`. On bare metal this is cpuidle's
//!   choice of a deeper state for a longer predicted idle
//!   (drivers/cpuidle/governors/menu.c: the deepest state whose
//!   `target_residency` fits the time to the next timer; the ramp is a
//!   continuum of such states, and it uses the idle's actual length, which
//!   for a timer wakeup is what menu predicts). On the KVM guests measured
//!   it is the hypervisor's: halt-polling then a deeper host sleep. Traced
//!   waking-to-running p50 of a sleeper alone on an idle CPU, by its sleep:
//!   2-vCPU VM 6/7/8/13/18 us at 0.25/0.5/1/2/5 ms; 16-vCPU VM (sleepers of
//!   `examples/fidelity/sleepers32.json` binned by their CPU's idle time)
//!   6 us up to 0.6 ms, 7 to 1 ms, 9 to 2 ms, 12 to 5 ms; 23 us at 5 ms
//!   (`schedlab calibrate`). Default ramp 5 ms: the sleep of calibrate's
//!   idle sleeper, so the `idle_exit_ns` it measures is the full exit.
//! * Remote wakeup (`ipi_ns`): the target is not the CPU running
//!   `try_to_wake_up`; the resched (or wake-list) IPI adds this.
//! * Preemption model (`preempt_model`): the simulated tasks run user code
//!   only, where none, voluntary and full all preempt at IRQ exit, so they
//!   behave alike. `lazy` (6.13+) differs for the classes that call
//!   `resched_curr_lazy` (`SchedClass::lazy_resched`, the fair class): a
//!   lazy request to a remote busy CPU sends no IPI and is acted on at
//!   that CPU's next tick.
//!
//! The delays apply only when a wakeup (or a new task) makes its target CPU
//! reschedule; the switch itself then costs `context_switch_ns` as before.
//! The target's current task does no user work while its CPU is in the
//! kernel for the delay (`stall_until_resched`).
//! With every cost 0 (`zero_costs`) the engine behaves exactly as without
//! this module. Defaults are measured on a 2-vCPU Firecracker VM running
//! Linux 6.18 (HZ 250, preempt=none), docs/model.md "Wakeup costs".

use super::Simulator;
use crate::clock::Ns;
use crate::config::TunableSet;
use crate::cpuset::CpuId;
use crate::event::EventKind;
use crate::spread::Spread;
use crate::task::{Busy, TaskId};
use crate::tunable::Tunable;
use crate::workload::Policy;

/// `preempt=` values, in `preempt_model` order.
pub const PREEMPT_MODELS: [&str; 4] = ["none", "voluntary", "full", "lazy"];

/// The tunables `SimConfig::zero_costs` sets to 0.
pub const COST_TUNABLES: [&str; 8] = [
    "context_switch_ns",
    "wakeup_spread_pct",
    "wakeup_tail_pct",
    "timer_slack_ns",
    "timer_jitter_ns",
    "wakeup_ns",
    "idle_exit_ns",
    "ipi_ns",
];

/// The wakeup path's tunables (engine tunables, every scheduler).
pub const LATENCY_TUNABLES: &[Tunable] = &[
    Tunable {
        name: "timer_slack_ns",
        default: 50_000,
        min: 0,
        max: 100_000_000,
        unit: "ns",
        doc: "hrtimer slack of sleeping SCHED_OTHER/BATCH/IDLE tasks (the kernel's default timer_slack_ns; RT and DEADLINE tasks have none)",
    },
    Tunable {
        name: "wakeup_ns",
        default: 8_000,
        min: 0,
        max: 10_000_000,
        unit: "ns",
        doc: "sched_waking to sched_switch when the wakeup preempts a busy CPU locally (IRQ entry, try_to_wake_up, __schedule); measured p50 of an RT wakee beside hogs on a 2-vCPU 6.18 VM",
    },
    Tunable {
        name: "idle_exit_ns",
        default: 12_000,
        min: 0,
        max: 10_000_000,
        unit: "ns",
        doc: "extra latency when the target CPU was idle (halted vCPU / C-state exit); measured on a 2-vCPU 6.18 VM: wakeup p50 20 us onto an idle CPU against 8 us onto a busy one",
    },
    Tunable {
        name: "idle_exit_ramp_ns",
        default: 5_000_000,
        min: 0,
        max: 1_000_000_000,
        unit: "ns",
        doc: "a CPU idle for less than this pays that share of idle_exit_ns (idle 1 ms of a 5 ms ramp: a fifth); 0 = the whole exit however short the idle. Traced on 2- and 16-vCPU 6.18 VMs: a sleeper's wakeup onto an idle CPU took 6 us after 0.25 ms of idle, 8-9 after 1-2 ms, 18-23 after 5 ms",
    },
    Tunable {
        name: "ipi_ns",
        default: 2_000,
        min: 0,
        max: 10_000_000,
        unit: "ns",
        doc: "extra latency of a remote wakeup, push or preemption (resched / wake-list IPI); traced on a 2-vCPU 6.18 VM: a FIFO wakee placed on the other CPU in the timer IRQ ran 10 us (p50) after sched_waking against 8-9 us for a local wakeup, a pushed task 7-10 us after its move; schedlab calibrate found 0 on every VM measured (until 2026-11-27 the default was 5 000, from shootout.md 5.1 row 4's unverified VM exits >= 5 us)",
    },
    Tunable {
        name: "wakeup_spread_pct",
        default: 130,
        min: 0,
        max: 1000,
        unit: "%",
        doc: "p90 of the wakeup path's delay (wakeup_ns + idle_exit_ns + ipi_ns, their medians) as a percentage of its median: each delay is drawn (seeded, log-logistic) with that p90; 0 or 100 = the median every time. Chosen so that the simulated waking-to-running p90/p50 of the fidelity suite's lone sleepers matches the hosts' (7 saved suites, 2- and 16-vCPU 6.18 VMs: onto an idle CPU 1.31-1.69, median 1.50, simulated 1.36-1.44; preempting hogs 1.47-2.22, median 1.67, simulated 1.65-1.76): the simulated ratio exceeds this value, other parts of the path adding their own spread (until 2026-11-27 the default was 180, from single traces: 1.86 beside hogs, 1.91 onto an idle CPU, which the drawn delays overshot to 1.96 and 2.2-2.4)",
    },
    Tunable {
        name: "wakeup_tail_pct",
        default: 185,
        min: 0,
        max: 2000,
        unit: "%",
        doc: "p99 of the wakeup path's delay as a percentage of its p90 (with wakeup_spread_pct above 100): beyond its p90 the factor has its own exponent; 0 = the plain log-logistic's (p99 = 1.9 x p90 at a spread of 180). schedlab calibrate with every switch recorded (BPF), 2026-11-27: 185 on a 2-vCPU 6.18 VM, 150 on a 16-vCPU one; the simulated sleepers' p99/p90 follows the tunable (1.79 at 185, 1.46 at 150). Until then 350, from traces of the same VM (p99/p90 2.1-4.9, median 3.6) whose switches onto an idle CPU other than 0 were recovered at the woken task's next record: paired on that VM, the recovery gives 1.82-1.93 where BPF gives 1.50-1.70, so it fattens the tail, though not to 3.6 (the rest: that day's machine)",
    },
    Tunable {
        name: "timer_jitter_ns",
        default: 0,
        min: 0,
        max: 10_000_000,
        unit: "ns",
        doc: "each sleep timer fires a uniform random 0..this late (seeded): the spread a real machine adds to every sleep cycle (IRQ delivery, idle exit, interrupted work); schedlab calibrate sets it from a timer sleeper's lateness spread; 0 = every cycle alike",
    },
    Tunable {
        name: "preempt_model",
        default: 0,
        min: 0,
        max: 3,
        unit: "",
        doc: "preemption model: 0 none, 1 voluntary, 2 full, 3 lazy (user-mode tasks see no difference among 0-2; with 3 a fair-class preemption of a remote busy CPU waits for its next tick)",
    },
];

/// The costs of one run, from its tunables.
#[derive(Debug, Clone, Copy, Default)]
pub struct WakeCosts {
    timer_slack: Ns,
    /// Width of the uniform random delay of each sleep timer.
    pub timer_jitter: Ns,
    wakeup: Ns,
    idle_exit: Ns,
    /// Idle length from which the whole `idle_exit` is paid (0: always).
    idle_exit_ramp: Ns,
    ipi: Ns,
    lazy: bool,
    /// The delays' spread around their medians (None: constant).
    spread: Option<Spread>,
}

impl WakeCosts {
    /// Read the tunables (absent ones count as 0: custom stacks in tests).
    pub fn from_tunables(t: &TunableSet) -> WakeCosts {
        let get = |n: &str| t.get(n).unwrap_or(0).max(0) as Ns;
        WakeCosts {
            timer_slack: get("timer_slack_ns"),
            timer_jitter: get("timer_jitter_ns"),
            wakeup: get("wakeup_ns"),
            idle_exit: get("idle_exit_ns"),
            idle_exit_ramp: get("idle_exit_ramp_ns"),
            ipi: get("ipi_ns"),
            lazy: get("preempt_model") == 3,
            spread: Spread::from_pcts(get("wakeup_spread_pct"), get("wakeup_tail_pct")),
        }
    }

    /// The exit latency of a CPU that has been idle for `idle_for`.
    pub fn idle_exit_after(&self, idle_for: Ns) -> Ns {
        if self.idle_exit_ramp == 0 || idle_for >= self.idle_exit_ramp {
            return self.idle_exit;
        }
        // Both factors are at most 10^7 and 10^9 (the tunables' bounds).
        (self.idle_exit as u128 * idle_for as u128 / self.idle_exit_ramp as u128) as Ns
    }

    /// Slack added to a sleep of a task with `policy`.
    pub fn slack_for(&self, policy: Policy) -> Ns {
        if policy.is_rt_or_dl() {
            0
        } else {
            self.timer_slack
        }
    }
}

/// Whose delay is drawn: a wakee's, or a CPU's for a class timer's
/// resched (no wakee).
#[derive(Debug, Clone, Copy)]
enum Drawer {
    Task(TaskId),
    Cpu(CpuId),
}

/// The spread's draws, by whom they are for: the n-th delay of a task (or
/// of a CPU's class timers) takes the n-th value of its own stream
/// (`rng::keyed`), so that runs of one workload and seed under different
/// schedulers give each task the same sequence of random costs, and a
/// task whose wakeups do not depend on the scheduler (an RT sleeper beside
/// fair tasks) gets the same latencies under all of them.
#[derive(Debug, Clone)]
pub(crate) struct SpreadDraws {
    seed: u64,
    tasks: Vec<u64>,
    cpus: Vec<u64>,
}

impl SpreadDraws {
    pub(crate) fn new(seed: u64) -> Self {
        SpreadDraws {
            seed,
            tasks: vec![],
            cpus: vec![],
        }
    }

    /// Start loading task `t`'s draw count (prefetch.rs).
    pub(crate) fn prefetch(&self, t: TaskId) {
        if let Some(n) = self.tasks.get(t) {
            crate::prefetch::prefetch(n);
        }
    }

    /// Take the next draw of `who`'s stream: its (key, position), whose
    /// bits [`Self::bits`] gives. Taking is what moves the stream; the
    /// bits of a draw left unused need not be computed.
    fn take(&mut self, who: Drawer) -> (u64, u64) {
        let (counts, index, key) = match who {
            Drawer::Task(t) => (&mut self.tasks, t, t as u64),
            Drawer::Cpu(c) => (&mut self.cpus, c, (1 << 48) | c as u64),
        };
        if counts.len() <= index {
            counts.resize(index + 1, 0);
        }
        let n = counts[index];
        counts[index] += 1;
        (key, n)
    }

    /// The 64 random bits of draw `n` of the stream `key`.
    fn bits(&self, (key, n): (u64, u64)) -> u64 {
        crate::rng::keyed(self.seed, key, n)
    }
}

/// What the wakeup path knew before it asked the target CPU to reschedule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WakeTarget {
    /// Target CPU.
    pub cpu: CpuId,
    /// CPU running `try_to_wake_up` (or the fork).
    pub from: CpuId,
    /// For how long the target had been idle; None if it was busy.
    pub idle_for: Option<Ns>,
    /// It already had a resched pending (the wakeup adds no delay then).
    pub had_resched: bool,
}

impl Simulator {
    /// Note the target's state before a wakeup enqueues `t` there.
    pub(crate) fn wake_target(&self, cpu: CpuId, from: CpuId) -> WakeTarget {
        WakeTarget {
            cpu,
            from,
            idle_for: self.idle_for(cpu),
            had_resched: self.m.rqs[cpu].need_resched,
        }
    }

    /// How long `cpu` has been idle (its idle task's `curr_since`); None if
    /// busy. A CPU that has run nothing yet was idle before the run began
    /// (on the host, the workers sleep until their common start): as long
    /// as can be.
    fn idle_for(&self, cpu: CpuId) -> Option<Ns> {
        let rq = &self.m.rqs[cpu];
        if rq.curr.is_some() {
            None
        } else if rq.nr_switches == 0 {
            Some(Ns::MAX)
        } else {
            Some(self.m.now.saturating_sub(rq.curr_since))
        }
    }

    /// After `wakeup_preempt` for wakee `t`: if it asked `w.cpu` to
    /// reschedule, defer that by the wakeup path's costs.
    pub(crate) fn delay_wakeup_resched(&mut self, t: TaskId, w: WakeTarget) {
        let class = self.class_of(t);
        self.delay_resched(class, w, Drawer::Task(t));
    }

    /// After a push moved `t` to `w.cpu` (`MigrationKind::Push`): if that
    /// CPU must reschedule for it, the request is remote (a resched IPI
    /// from `w.from`, the pushing CPU), and it pays the wakeup path's
    /// costs as a remote wakeup does. The draw is the target CPU's (as
    /// for class timers): the pushed task's own stream stays that of its
    /// wakeups. Before 2026-11-27 the pushed task ran on the other CPU at
    /// once (2-vCPU `dl2`: `dl3`'s wakeup latency p50 9 µs against the
    /// host's 22).
    pub(crate) fn delay_push_resched(&mut self, t: TaskId, w: WakeTarget) {
        let class = self.class_of(t);
        self.delay_resched(class, w, Drawer::Cpu(w.cpu));
    }

    /// A class timer of class `class` fired on `from` (an hrtimer IRQ:
    /// DEADLINE replenishment, RT unthrottling, sched_ext timers): every
    /// CPU it newly asked to reschedule pays the wakeup path's costs, as a
    /// wakeup from that IRQ would. `before`: each CPU's need_resched
    /// before the timer ran.
    pub(crate) fn delay_timer_rescheds(&mut self, class: usize, from: CpuId, before: &[bool]) {
        for (cpu, had_resched) in before.iter().enumerate() {
            if *had_resched || !self.m.rqs[cpu].need_resched {
                // Not newly asked: only the CPU's stream moves, as in
                // `delay_resched` (issue 18: with 64 CPUs, building every
                // CPU's wake target after every DEADLINE replenishment
                // was 5 % of the run).
                if self.costs.spread.is_some() {
                    self.spread_draws.take(Drawer::Cpu(cpu));
                }
                continue;
            }
            let w = WakeTarget {
                had_resched: *had_resched,
                ..self.wake_target(cpu, from)
            };
            self.delay_resched(class, w, Drawer::Cpu(cpu));
        }
    }

    fn delay_resched(&mut self, class: usize, w: WakeTarget, who: Drawer) {
        // Every wakeup takes its stream's next value, delayed or not: a
        // task's n-th wakeup has the same draw whatever became of its
        // earlier ones (a wakeup that found a resched pending, under one
        // scheduler and not another, shifts nothing).
        let draw = self
            .costs
            .spread
            .is_some()
            .then(|| self.spread_draws.take(who));
        let rq = &self.m.rqs[w.cpu];
        if w.had_resched || !rq.need_resched {
            return;
        }
        let c = &self.costs;
        let remote = w.cpu != w.from;
        let mut delay = c.wakeup;
        if let Some(idle_for) = w.idle_for {
            delay += c.idle_exit_after(idle_for);
        }
        if remote {
            delay += c.ipi;
        }
        if let (Some(spread), Some(d)) = (c.spread.as_ref(), draw) {
            delay = spread.scale(delay, self.spread_draws.bits(d));
        }
        let mut at = self.m.now + delay;
        let lazy_class = self.classes.get_ref(class).lazy_resched();
        let was_idle = w.idle_for.is_some();
        if c.lazy && remote && !was_idle && lazy_class {
            at = at.max(self.next_tick_of(w.cpu));
        }
        if at > self.m.now {
            self.m.clear_resched(w.cpu);
            self.m.rqs[w.cpu].resched_deferred = true;
            self.events.push(at, EventKind::Resched { cpu: w.cpu });
            if !was_idle {
                self.stall_until_resched(w.cpu, at, if remote { c.ipi } else { 0 });
            }
        }
    }

    /// The target CPU spends the end of a granted preemption's delay in the
    /// kernel (the IRQ that woke the task, or the resched IPI, then
    /// `__schedule`): its current task does no user work from `user_until`
    /// (`now` + the IPI's flight for a remote wakeup) until the switch at
    /// `at`. Without this the task could finish its burst and block
    /// inside a window in which, on a real machine, it cannot run (host
    /// traces of short sleepers: a timer wakeup landing a few µs before
    /// the running task's burst ends preempts it; shootout.md §5.1).
    ///
    /// Modelled by starting the rest of its segment `at − user_until`
    /// later: the work done by `at` and the segment's end are exact; a
    /// task that finishes within the IPI's flight is left alone.
    fn stall_until_resched(&mut self, cpu: CpuId, at: Ns, ipi: Ns) {
        let Some(t) = self.m.rqs[cpu].curr else {
            return;
        };
        let Some(Busy::Work(_)) = self.m.tasks[t].busy else {
            return;
        };
        // A drawn delay (`wakeup_spread_pct`) can be shorter than the IPI's
        // nominal flight: then the task runs until the switch, unstalled.
        let user_until = (self.m.now + ipi).min(at);
        if at == user_until || self.m.rqs[cpu].seg_end.is_some_and(|end| end <= user_until) {
            return;
        }
        self.settle(cpu);
        let already = self.m.rqs[cpu].seg_start.saturating_sub(self.m.now);
        self.start_segment(cpu, already + (at - user_until));
    }

    /// When the periodic tick next hits `cpu` (ticks at or after now).
    fn next_tick_of(&self, cpu: CpuId) -> Ns {
        let (at, next_cpu) = self.next_tick;
        if cpu >= next_cpu {
            at
        } else {
            at + self.m.tick_ns()
        }
    }

    /// A deferred wakeup resched arrives.
    pub(crate) fn deferred_resched(&mut self, cpu: CpuId) {
        if self.m.online.contains(cpu) {
            self.m.resched(cpu);
        }
    }
}
