//! The simulation engine: builds a [`Machine`] from a workload and a
//! configuration, then runs the event loop.
//!
//! * [`core`]: scheduling mechanics (`__schedule`, `try_to_wake_up`,
//!   migration, fork and exit), the counterpart of kernel/sched/core.c.
//! * [`exec`]: the rt-app interpreter: what a task does while it runs.
//! * [`sync`]: mutexes, conditions, barriers and timers.

mod abort;
mod bandwidth;
mod blocked;
mod cgroups;
pub mod core;
mod custom;
pub mod exec;
pub mod governor;
pub mod hotplug;
mod hrtimer;
pub mod latency;
mod lifecycle;
mod lookahead;
pub mod nohz;
mod noise;
mod private_balance;
mod program;
mod segments;
pub mod smt;
pub mod sync;
mod validate;

use crate::class::fair::weights::{nice_to_weight, WEIGHT_IDLEPRIO};
use crate::class::stack::Stack;
use crate::clock::Ns;
use crate::config::{SimConfig, TunableSet};
use crate::cpuset::{CpuId, CpuSet};
use crate::event::{EventKind, EventQueue};
use crate::machine::{Machine, Process, TaskGroup};
use crate::metrics::{self, RunResult};
use crate::rng::Rng;
use crate::runqueue::Rq;
use crate::stats::Stats;
use crate::topology::TopologyBuilder;
use crate::trace::Trace;
use crate::workload::{Attrs, Calibration, Event, Policy, Workload, WorkloadError};
pub use custom::CustomStack;
use sync::SyncState;

/// Why a simulation could not be built or run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// The workload is invalid for this run.
    Workload(WorkloadError),
    /// The configuration is invalid.
    Config(String),
    /// The workload misbehaves at run time (e.g. loops without consuming time).
    Runtime(String),
    /// A scheduling policy misbehaved (the message names the policy, the
    /// hook, the task and the time).
    Policy(String),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Workload(e) => write!(f, "{e}"),
            SimError::Config(s) | SimError::Runtime(s) | SimError::Policy(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for SimError {}

impl From<WorkloadError> for SimError {
    fn from(e: WorkloadError) -> Self {
        SimError::Workload(e)
    }
}

/// Bounds on the work a workload may cause, so a runaway workload ends
/// with a clear error instead of exhausting memory or time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Threads a run may create.
    pub threads: usize,
    /// Zero-time steps one task may take at one simulated instant.
    pub events_per_instant: u64,
}

/// A running simulation.
pub struct Simulator {
    /// Machine state.
    pub m: Machine,
    /// The class stack, highest priority first (class/stack.rs).
    pub classes: Stack,
    /// The workload.
    pub wl: Workload,
    /// Its programs laid out flat for the event loop (engine/program.rs).
    programs: program::Programs,
    /// Configuration.
    pub cfg: SimConfig,
    /// Effective tunables.
    pub tunables: TunableSet,
    events: EventQueue,
    /// Every CPU's `Rq::seg_end`, indexed by time (segments.rs).
    seg_ends: segments::SegmentEnds,
    sync: SyncState,
    end: Option<Ns>,
    finished_at: Option<Ns>,
    cs_cost: Ns,
    mig_cost: Ns,
    costs: latency::WakeCosts,
    /// How many delays each task and CPU has drawn (latency.rs).
    spread_draws: latency::SpreadDraws,
    /// Scratch for a class timer: each CPU's need_resched before it ran.
    resched_before: Vec<bool>,
    /// Sleep timers with slack, per CPU (hrtimer.rs).
    slack_timers: hrtimer::SlackTimers,
    /// An empty buffer for the classes' next migration requests while
    /// `apply_migrations` carries out the last ones (core.rs).
    migrations_spare: Vec<crate::machine::MigrationRequest>,
    tick_mode: nohz::TickMode,
    /// Under NO_HZ_IDLE, whether an idle CPU keeps its tick until the first
    /// tick after it went idle (`idle_tick_retain`, nohz.rs).
    idle_tick_retain: bool,
    /// The CPUs whose retained idle tick is still to come (set at idle
    /// entry with `idle_tick_retain`, cleared by that tick): an idle CPU
    /// outside it has its tick stopped.
    idle_tick_due: crate::cpuset::CpuSet,
    /// `smt_speed_pct`: a thread's speed while its sibling runs a task.
    smt_pct: u64,
    /// No CPU ticks (NO_HZ with every CPU idle): `next_tick` waits.
    tick_parked: bool,
    /// Time of the last NOHZ idle-balance pass (one per jiffy).
    last_ilb: Option<Ns>,
    /// Ticks that would change nothing are counted and skipped (nohz.rs
    /// `quiet_until`); off only to check that shortcut against the full tick.
    quiet_ticks: bool,
    /// Per CPU, the part of its quiet horizon that only its own state
    /// decides (nohz.rs `local_quiet_horizon`), valid while the CPU's
    /// `quiet_stale` has no `STALE_OWN`: an event that touches no CPU's
    /// state but others' leaves it standing (`quiet_touch`).
    quiet_local: Vec<Ns>,
    /// Per CPU, which of its kept horizons are stale (nohz.rs `STALE_*`
    /// bits): one byte a CPU, so that a touch, on every switch and
    /// wakeup, is one store.
    quiet_stale: Vec<u8>,
    /// (generation, CPUs, horizon) of the idle balancer's part of the
    /// quiet horizon (nohz.rs `stopped_quiet_until`): the same for every
    /// ticking CPU that kicks it at one generation, so computed once.
    ilb_quiet_cache: (u64, CpuSet, Ns),
    /// Per CPU, its balancing's quiet horizon (nohz.rs
    /// `kept_balance_quiet_until`), valid while its `quiet_stale` has no
    /// `STALE_BALANCE`.
    balance_kept: Vec<Ns>,
    /// Handled events so far (a quiet tick is not handled): the state's
    /// generation for `ilb_quiet_cache`.
    state_gen: u64,
    /// Ticks counted without running (`quiet_skipped`).
    quiet_skipped: u64,
    /// Which classes' balancing passes are private, and what is kept
    /// about them (engine/private_balance.rs).
    private: private_balance::PrivateBalance,
    calib_rate: (u64, u64),
    /// Per CPU, the largest chunk of work handed out at the unit rate
    /// (exec.rs `unit_chunk_rooms`).
    unit_chunk_room: Vec<u64>,
    ns_per_loop: Option<u64>,
    instance_counter: Vec<u32>,
    /// Launcher threads placed by name (`SimConfig::start_cpus`).
    start_cpus: std::collections::BTreeMap<String, CpuId>,
    next_pid: u32,
    /// Next periodic tick: (time, next CPU to tick at that time). Every CPU
    /// ticks at the same jiffy boundaries (no sched_skew_tick), CPUs in
    /// index order; ticks live outside the heap because there are as many
    /// of them as of all other events together.
    next_tick: (Ns, crate::cpuset::CpuId),
    /// Process name → index in `m.processes` (lookup only, never iterated).
    process_index: std::collections::HashMap<String, usize>,
    autogroup: bool,
    /// Frequency levels per CPU (kHz, ascending) and, for ondemand, each
    /// CPU's busy time at the last sample; for a schedule, the next step.
    freq_levels: Vec<Vec<u64>>,
    gov_busy: Vec<Ns>,
    gov_step: usize,
    /// Whether some class's weights depend on thread counts
    /// (`SchedClass::weights_track_threads`).
    weights_track_threads: bool,
    /// SCHED_DEADLINE bandwidth admitted (`dl_b->total_bw`, tasks only) and
    /// the limit for tasks, BW_SHIFT fixed point.
    dl_bw: (u64, u64),
    autogroups: std::collections::BTreeMap<String, usize>,
    steps_without_time: u64,
    /// Bounds on runaway workloads (tunables max_threads,
    /// max_events_per_instant).
    limits: Limits,
    last_step_time: Ns,
    task_start: Vec<Ns>,
    error: Option<SimError>,
}

impl Simulator {
    /// Build a simulation of `wl` under `cfg`.
    pub fn new(wl: Workload, cfg: SimConfig) -> Result<Self, SimError> {
        Self::build(wl, cfg, None)
    }

    fn build(
        mut wl: Workload,
        cfg: SimConfig,
        custom: Option<CustomStack<'_>>,
    ) -> Result<Self, SimError> {
        let overrides = cfg.overrides();
        let resolved = match &custom {
            None => crate::registry::resolve(&cfg.scheduler, &cfg.dl_policy, &overrides),
            // No `+policy`: a custom stack names no fair-class hooks.
            Some(c) => crate::registry::resolve_with(
                c.def,
                None,
                &cfg.scheduler,
                &cfg.scheduler,
                &cfg.dl_policy,
                &overrides,
            ),
        }
        .map_err(SimError::Config)?;
        let tunables = resolved.tunables;
        if !(1..=10_000).contains(&cfg.hz) {
            return Err(SimError::Config(format!(
                "hz must be 1..=10000, got {}",
                cfg.hz
            )));
        }
        let llc = if cfg.cpus_per_llc == 0 {
            cfg.cpus
        } else {
            cfg.cpus_per_llc
        };
        Self::check_frequencies(&cfg)?;
        let topo = TopologyBuilder::new(cfg.cpus)
            .smt(cfg.smt)
            .cpus_per_llc(llc)
            .capacities(cfg.capacity.clone())
            .frequencies(
                cfg.freq_mhz
                    .iter()
                    .map(|(c, m)| (c * 1000, m * 1000))
                    .collect(),
            )
            .build()
            .map_err(|e| SimError::Config(e.0))?;
        Self::validate(&wl, cfg.cpus)?;
        hotplug::validate(&cfg.hotplug, cfg.cpus).map_err(SimError::Config)?;
        let start_cpus = Self::start_cpus_of(&wl, &cfg.start_cpus, cfg.cpus)?;
        Self::check_fairness_tasks(&wl, &cfg.fairness_tasks)?;
        let end = cfg.duration.or(wl.duration);
        if end.is_none() && wl.runs_forever() {
            return Err(SimError::Config(format!(
                "{}: some task loops forever (\"loop\": -1 is rt-app's default); set global.duration or pass --duration",
                wl.source
            )));
        }
        let (calib_rate, ns_per_loop) = match wl.calibration {
            Calibration::Cpu(c) if c < cfg.cpus => (topo.rate(c), None),
            Calibration::Cpu(c) => {
                return Err(SimError::Workload(WorkloadError::at(
                    &wl.source,
                    "global.calibration",
                    format!("CPU{c} does not exist on a {}-CPU machine", cfg.cpus),
                )))
            }
            Calibration::NsPerLoop(n) => ((1, 1), Some(n)),
        };
        let unit_chunk_room = exec::unit_chunk_rooms(&topo, calib_rate);
        noise::add_noise_threads(&mut wl, &tunables, cfg.cpus);
        let autogroup = tunables.get("autogroup").unwrap_or(0) != 0;
        let limit = |k: &str, d: i64| tunables.get(k).unwrap_or(d).max(1);
        let limits = Limits {
            threads: limit("max_threads", 100_000) as usize,
            events_per_instant: limit("max_events_per_instant", 1_000_000) as u64,
        };
        let idle_tick_retain = tunables.get("idle_tick_retain").unwrap_or(0) != 0;
        let idle_at_start = topo.all();
        let m = Machine {
            now: 0,
            clock_skip_act: None,
            hz: cfg.hz,
            tick_phase: 0,
            tasks: vec![],
            processes: vec![],
            groups: vec![TaskGroup {
                path: "/".into(),
                parent: None,
                shares: 1024,
            }],
            rqs: (0..cfg.cpus)
                .map(|c| Rq {
                    freq_khz: topo.cpu(c).freq_khz,
                    ..Rq::default()
                })
                .collect(),
            rng: Rng::new(cfg.seed),
            seed: cfg.seed,
            stats: Stats::default(),
            trace: cfg.trace.then(|| Trace::new(cfg.trace_counters)),
            migrations: vec![],
            online: topo.all(),
            timers: vec![],
            error: None,
            resched_cpus: crate::cpuset::CpuSet::empty(),
            aborts: vec![],
            any_sched_idle: false,
            idle: crate::cpuset::CpuSet::first_n(cfg.cpus),
            topo,
        };
        let mut sim = Simulator {
            m,
            classes: Stack::new(),
            cs_cost: tunables.get("context_switch_ns").unwrap_or(0) as Ns,
            mig_cost: tunables.get("migration_ns").unwrap_or(0) as Ns,
            costs: latency::WakeCosts::from_tunables(&tunables),
            spread_draws: latency::SpreadDraws::new(cfg.seed),
            resched_before: Vec::new(),
            slack_timers: hrtimer::SlackTimers::new(cfg.cpus),
            migrations_spare: Vec::new(),
            tick_mode: nohz::TickMode::from_tunable(tunables.get("nohz")),
            idle_tick_retain,
            // Idle since before the run, every CPU has its retained tick due.
            idle_tick_due: if idle_tick_retain {
                idle_at_start
            } else {
                crate::cpuset::CpuSet::empty()
            },
            smt_pct: tunables.get("smt_speed_pct").unwrap_or(100).clamp(1, 100) as u64,
            tick_parked: false,
            last_ilb: None,
            quiet_ticks: true,
            quiet_local: vec![0; cfg.cpus],
            quiet_stale: vec![nohz::STALE_ALL; cfg.cpus],
            ilb_quiet_cache: (u64::MAX, CpuSet::empty(), 0),
            balance_kept: vec![0; cfg.cpus],
            state_gen: 0,
            quiet_skipped: 0,
            private: private_balance::PrivateBalance::new(cfg.cpus),
            tunables,
            events: EventQueue::default(),
            seg_ends: segments::SegmentEnds::new(cfg.cpus),
            sync: SyncState::default(),
            end,
            finished_at: None,
            calib_rate,
            unit_chunk_room,
            ns_per_loop,
            instance_counter: vec![0; wl.tasks.len()],
            start_cpus,
            next_pid: 1000,
            next_tick: (0, 0),
            process_index: std::collections::HashMap::new(),
            autogroup,
            weights_track_threads: false,
            freq_levels: vec![],
            gov_busy: vec![],
            gov_step: 0,
            dl_bw: (0, 0),
            autogroups: std::collections::BTreeMap::new(),
            steps_without_time: 0,
            limits,
            last_step_time: 0,
            task_start: vec![],
            error: None,
            cfg,
            programs: program::Programs::default(),
            wl,
        };
        let phase = sim.tunables.get("tick_phase_ns");
        sim.m.tick_phase = nohz::tick_phase(phase, sim.m.tick_ns(), &mut sim.m.rng);
        sim.build_groups();
        if sim.autogroup {
            sim.build_autogroups();
        }
        let ctx = crate::plugin::StackCtx {
            m: &sim.m,
            wl: &sim.wl,
            tunables: &sim.tunables,
            fair_policy: resolved.fair_policy,
            dl_order: resolved.dl_order,
        };
        let mut stack = match custom {
            None => (resolved.scheduler.build)(&ctx),
            Some(c) => (c.build)(&ctx),
        }
        .map_err(SimError::Config)?;
        sim.wl.warnings.append(&mut stack.warnings);
        sim.dl_bw.1 = bandwidth::dl_bw_limit(sim.m.nr_cpus(), stack.server_bandwidth);
        sim.weights_track_threads = stack.iter().any(|c| c.weights_track_threads());
        sim.classes = stack;
        sim.check_policies(resolved.scheduler.name)?;
        sim.programs = program::Programs::of(&sim.wl, &mut sim.sync);
        sim.sync.timers = vec![None; sim.programs.timer_names.len()];
        sim.init_barriers();
        sim.start();
        if let Some(e) = sim.error.take() {
            // Admission control refused a task at start.
            return Err(e);
        }
        Ok(sim)
    }

    fn init_barriers(&mut self) {
        for t in &self.wl.tasks {
            for ph in &t.phases {
                for e in &ph.events {
                    if let Event::Barrier(b) = e {
                        let id = self.sync.id(b);
                        self.sync.barriers[id].parties += t.instances as usize;
                    }
                }
            }
        }
    }

    /// Create the initial threads and the first ticks.
    fn start(&mut self) {
        self.start_governor();
        for (idx, (at, _, _)) in self.cfg.hotplug.iter().enumerate() {
            self.events.push(*at, EventKind::Hotplug { idx });
        }
        self.next_tick = (self.m.next_tick_after(0), 0);
        if let Some(end) = self.end {
            self.events.push(end, EventKind::End);
        }
        // Size the per-task tables once (at most 2^20 ahead: a bogus
        // instance count still fails where it always did, task by task).
        let n = self
            .wl
            .tasks
            .iter()
            .fold(0usize, |a, t| a.saturating_add(t.instances as usize))
            .min(1 << 20);
        self.m.tasks.reserve_exact(n);
        self.m.stats.tasks.reserve_exact(n);
        // At most one process per task object (the launcher's threads).
        self.m.processes.reserve_exact(self.wl.tasks.len());
        self.task_start.reserve_exact(n);
        for k in 0..self.classes.len() {
            self.classes.get(k).reserve_tasks(n);
        }
        for d in 0..self.wl.tasks.len() {
            for _ in 0..self.wl.tasks[d].instances {
                self.fork_task(d, None, 0);
            }
        }
        self.process_pending();
        // Timers the classes armed while the first tasks started (an RT
        // period timer, the ext watchdog) belong in the queue now, not after
        // the first event.
        self.queue_class_timers();
    }

    /// Process of a new thread of task object `def`, created on first use.
    fn process_for(&mut self, def: usize) -> usize {
        let name = &self.wl.tasks[def].process;
        if let Some(&i) = self.process_index.get(name) {
            return i;
        }
        let name = name.clone();
        self.process_index
            .insert(name.clone(), self.m.processes.len());
        self.next_pid += 1;
        self.m.processes.push(Process {
            name,
            tgid: self.next_pid,
            threads: vec![],
            live: 0,
        });
        self.m.processes.len() - 1
    }

    /// Weight of a fair task (`set_load_weight`).
    pub(crate) fn weight_of(policy: Policy, nice: i32) -> u64 {
        if policy == Policy::Idle {
            WEIGHT_IDLEPRIO
        } else {
            nice_to_weight(nice)
        }
    }

    /// Effective attributes of a task object in a phase.
    pub(crate) fn attrs_of(&self, def: usize, phase: usize) -> Attrs {
        let d = &self.wl.tasks[def];
        d.attrs.overlay(&d.phases[phase].attrs)
    }

    pub(crate) fn cpuset_of(&self, a: &Attrs) -> CpuSet {
        match &a.cpus {
            Some(v) => {
                let mut s = CpuSet::empty();
                for c in v {
                    s.insert(*c);
                }
                s
            }
            None => self.m.topo.all(),
        }
    }

    /// Run until simulated time `limit` (or the end). Returns true when the
    /// run is over.
    pub fn run_until(&mut self, limit: Ns) -> Result<bool, SimError> {
        self.run_bounded(limit, u64::MAX)
    }

    /// Like [`Self::run_until`], but return after at most `max_events`
    /// events, so a caller can check for Ctrl-C and report progress even
    /// while simulated time stands still. Returns true when the run is
    /// over. Splitting a run this way changes nothing in its result.
    pub fn run_bounded(&mut self, limit: Ns, max_events: u64) -> Result<bool, SimError> {
        // The state may have changed between calls (hotplug, a caller).
        self.state_gen += 1;
        self.quiet_touch_all();
        self.ask_private_balance();
        let mut budget = max_events;
        while let Some(t) = self.next_time() {
            if t > limit || self.finished_at.is_some() || budget == 0 {
                break;
            }
            budget -= 1;
            // At equal times: segment ends (lowest CPU first), then queued
            // events in (time, sequence) order, then ticks (lowest CPU
            // first). Deterministic.
            let seg = self.seg_ends.earliest().filter(|e| e.0 == t).map(|e| e.1);
            let kind = if let Some(cpu) = seg {
                self.set_seg_end(cpu, None);
                self.prefetch_next_segment_end();
                EventKind::SegmentEnd { cpu }
            } else if self.events.peek_time() == Some(t) {
                let Some(ev) = self.events.pop() else { break };
                self.prefetch_next_wakee();
                ev.kind
            } else {
                let (at, cpu) = self.next_tick;
                if cpu == 0 {
                    // Whole jiffies of quiet ticks at once (nohz.rs).
                    if let Some((jiffies, ticks)) = self.quiet_jiffies(at, limit) {
                        self.skip_quiet_jiffies(at, jiffies, ticks);
                        continue;
                    }
                }
                // This jiffy's ticks from `cpu` on, while quiet (nohz.rs).
                match self.deliver_quiet_ticks(t, cpu, &mut budget) {
                    Some(cpu) => EventKind::Tick(cpu),
                    None => continue,
                }
            };
            self.m.now = t;
            self.m.stats.events += 1;
            self.state_gen += 1;
            self.handle(kind)?;
            self.process_pending();
            if self.tick_parked {
                self.unpark_tick();
            }
            if !self.m.aborts.is_empty() {
                self.apply_aborts();
                self.process_pending();
            }
            if let Some(msg) = self.m.error.take() {
                self.fail(SimError::Policy(msg));
            }
            self.queue_class_timers();
            self.refresh_private_balance();
            if let Some(e) = self.error.take() {
                return Err(e);
            }
        }
        Ok(self.is_done())
    }

    /// Check every class's invariants and the engine's own (tests use this
    /// between steps).
    pub fn check_invariants(&self) -> Result<(), String> {
        for c in self.classes.iter() {
            c.check_invariants(&self.m)?;
        }
        for (cpu, rq) in self.m.rqs.iter().enumerate() {
            if let Some(t) = rq.curr {
                if self.m.tasks[t].cpu != cpu {
                    return Err(format!(
                        "task {t} current on cpu {cpu} but task_cpu is {}",
                        self.m.tasks[t].cpu
                    ));
                }
                if !self.m.tasks[t].affinity.contains(cpu) {
                    return Err(format!("task {t} runs on cpu {cpu} outside its affinity"));
                }
            }
            let queued = self
                .m
                .tasks
                .iter()
                .filter(|t| t.cpu == cpu && t.is_queued())
                .count();
            if queued != rq.nr_running as usize {
                return Err(format!(
                    "cpu {cpu}: nr_running {} but {queued} queued tasks",
                    rq.nr_running
                ));
            }
        }
        Ok(())
    }

    /// Time of the next event, if any (for callers running in batches).
    pub fn next_event_time(&self) -> Option<Ns> {
        self.next_time()
    }

    /// Time of the next event (queued or segment end).
    fn next_time(&self) -> Option<Ns> {
        let seg = self.seg_ends.earliest().map(|e| e.0);
        let queued = match (seg, self.events.peek_time()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Ticks alone never keep a run going: with nothing else pending,
        // every task has exited or sleeps forever. Simulated time saturates
        // (exec.rs `later`): what would happen at or past `Ns::MAX`, the end
        // of simulated time, never happens.
        queued
            .filter(|q| *q < Ns::MAX)
            .map(|q| q.min(self.next_tick.0))
    }

    /// Whether the run is over.
    pub fn is_done(&self) -> bool {
        self.finished_at.is_some() || self.next_time().is_none()
    }

    /// Whether ticks that would change nothing are skipped (default true;
    /// nohz.rs `quiet_until`). Off, every tick runs in full: for tests that
    /// hold the shortcut to the same results.
    pub fn set_quiet_ticks(&mut self, on: bool) {
        self.quiet_ticks = on;
        self.state_gen += 1;
        self.quiet_touch_all();
    }

    /// Ticks so far that were quiet and counted without running: how much
    /// the shortcut of [`Self::set_quiet_ticks`] takes (tests, benches).
    pub fn quiet_skipped(&self) -> u64 {
        self.quiet_skipped
    }

    /// Time the run ends (or is expected to end), for progress reporting.
    pub fn end_time(&self) -> Option<Ns> {
        self.end
    }

    /// Run to completion and collect the result.
    pub fn run(mut self) -> Result<RunResult, SimError> {
        self.run_until(Ns::MAX)?;
        Ok(self.finish())
    }

    fn handle(&mut self, ev: EventKind) -> Result<(), SimError> {
        match ev {
            EventKind::Tick(cpu) => {
                self.tick(cpu);
                self.expire_slack_timers(cpu);
            }
            EventKind::SegmentEnd { cpu } => {
                if let Some(t) = self.m.rqs[cpu].curr {
                    self.settle(cpu);
                    self.m.tasks[t].busy = None;
                    self.step(t)?;
                }
            }
            EventKind::Wake { task, gen } => {
                // A timer that already expired with another (hrtimer.rs) is
                // off its queue: it fires nothing at its hard expiry.
                if self.sleep_timer_queued(task, gen) {
                    let cpu = self.m.tasks[task].cpu;
                    self.try_to_wake_up(task, crate::class::Waker { cpu, task: None });
                    self.expire_slack_timers(cpu);
                }
            }
            EventKind::ServerTimer { cpu } => self.server_timer(cpu),
            EventKind::GovernorTick => self.governor_tick(),
            EventKind::Hotplug { idx } => self.hotplug(idx),
            EventKind::ClassTimer { class, cpu, tag } => {
                if self.one_more_at_this_instant() {
                    let name = self.classes.get(class).name();
                    return Err(self.timers_without_time(name));
                }
                // Each CPU's need_resched before the timer, in a buffer
                // kept between timers (one allocation per timer was 2 %
                // of the 64-CPU global-EDF set).
                let mut before = std::mem::take(&mut self.resched_before);
                before.clear();
                before.extend(self.m.rqs.iter().map(|r| r.need_resched));
                self.quiet_touch(cpu);
                self.classes.get(class).timer(&mut self.m, cpu, tag);
                self.delay_timer_rescheds(class, cpu, &before);
                self.resched_before = before;
            }
            EventKind::Resched { cpu } => self.deferred_resched(cpu),
            EventKind::End => self.finished_at = Some(self.m.now),
        }
        Ok(())
    }

    /// The hrtimer interrupt ran on `cpu` (a tick or a sleep timer's hard
    /// expiry): every sleep timer queued there whose soft expiry has passed
    /// expires too (hrtimer.rs).
    fn expire_slack_timers(&mut self, cpu: usize) {
        self.quiet_touch(cpu);
        let due = self.slack_timers.due(cpu, self.m.now);
        self.prefetch_wakeups(&due);
        for &(task, gen) in &due {
            if self.sleep_timer_queued(task, gen) {
                self.try_to_wake_up(task, crate::class::Waker { cpu, task: None });
            }
        }
        self.slack_timers.give_back(due);
    }

    /// Whether the sleep timer `task` armed in sleep generation `gen` is
    /// still queued: the task still sleeps that sleep (no timer expired it
    /// yet and it has not slept again since).
    fn sleep_timer_queued(&self, task: crate::task::TaskId, gen: u64) -> bool {
        let t = &self.m.tasks[task];
        t.sleep_gen == gen && t.state == crate::task::TaskState::Sleeping
    }

    fn tick(&mut self, cpu: usize) {
        if !self.m.online.contains(cpu) {
            return;
        }
        self.m.touch_rq_clock(cpu);
        self.quiet_touch(cpu);
        self.server_update(cpu);
        if let Some(t) = self.m.rqs[cpu].curr {
            let c = self.class_of(t);
            self.classes.get(c).task_tick(&mut self.m, cpu, t);
        }
        for c in 0..self.classes.len() {
            self.classes.get(c).tick_balance(&mut self.m, cpu);
        }
        self.nohz_idle_balance(cpu);
    }

    /// Move class timer requests into the event queue, if there are any
    /// (the test inline, after every event: most request none).
    #[inline]
    fn queue_class_timers(&mut self) {
        if !self.m.timers.is_empty() {
            self.queue_requested_timers();
        }
    }

    /// [`Self::queue_class_timers`]. Drained in place: the vector keeps its
    /// buffer for the next requests (taken, it was freed here and
    /// allocated again by the next request: at every DEADLINE throttle, 2 %
    /// of the global-EDF anchor).
    fn queue_requested_timers(&mut self) {
        for r in self.m.timers.drain(..) {
            let Some(class) = self.classes.position(r.class) else {
                continue;
            };
            self.events.push(
                r.at,
                EventKind::ClassTimer {
                    class,
                    cpu: r.cpu,
                    tag: r.tag,
                },
            );
        }
    }

    /// Finish accounting and build the result.
    pub fn finish(mut self) -> RunResult {
        let end = self.finished_at.unwrap_or(self.m.now);
        self.m.now = end;
        for cpu in 0..self.m.nr_cpus() {
            self.settle(cpu);
            if let Some(t) = self.m.rqs[cpu].curr {
                let ran = end - self.m.rqs[cpu].curr_since;
                self.m.stats.tasks[t].cpu_time += ran;
                self.m.rqs[cpu].busy_ns += ran;
                self.m.rqs[cpu].curr_since = end;
            }
        }
        for t in 0..self.m.tasks.len() {
            if let Some(since) = self.m.tasks[t].runnable_since.take() {
                self.m.stats.tasks[t].wait_time += end - since;
            }
            // Count the samples a histogram holds back now, once, rather
            // than in a copy at each quantile the metrics ask for.
            self.m.stats.tasks[t].wakeup_latency.hist.settle();
        }
        let idle_end = self.finished_at.is_none()
            && self
                .m
                .tasks
                .iter()
                .any(|x| x.exited.is_none() && !self.wl.tasks[x.def].daemon);
        let mut blocked = self.blocked_warnings(idle_end);
        self.wl.warnings.append(&mut blocked);
        let trace = self.m.trace.take();
        // The classes' per-task state and the event queue are done with:
        // free them before the metrics are built, which is the run's peak
        // of memory at 10,000 tasks (issue 18).
        drop(self.classes);
        drop(self.events);
        metrics::collect(&mut self.m, trace, &self.wl, &self.cfg, &self.tunables, end)
    }
}
