//! The simulation engine: builds a [`Machine`] from a workload and a
//! configuration, then runs the event loop.
//!
//! * [`core`]: scheduling mechanics (`__schedule`, `try_to_wake_up`,
//!   migration, fork and exit), the counterpart of kernel/sched/core.c.
//! * [`exec`]: the rt-app interpreter: what a task does while it runs.
//! * [`sync`]: mutexes, conditions, barriers and timers.

pub mod core;
pub mod exec;
pub mod governor;
pub mod hotplug;
pub mod server;
pub mod sync;

use crate::class::dl::Dl;
use crate::class::fair::tunables::{FairParams, Version};
use crate::class::fair::weights::{nice_to_weight, WEIGHT_IDLEPRIO};
use crate::class::fair::Fair;
use crate::class::rt::{Rt, RtParams};
use crate::class::SchedClass;
use crate::clock::Ns;
use crate::config::{SchedulerKind, SimConfig, TunableSet};
use crate::cpuset::CpuSet;
use crate::event::{EventKind, EventQueue};
use crate::machine::{Machine, Process, TaskGroup};
use crate::metrics::{self, RunResult};
use crate::rng::Rng;
use crate::runqueue::Rq;
use crate::stats::Stats;
use crate::topology::TopologyBuilder;
use crate::trace::Trace;
use crate::workload::{Attrs, Calibration, Event, Phase, Policy, TaskDef, Workload, WorkloadError};
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
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Workload(e) => write!(f, "{e}"),
            SimError::Config(s) | SimError::Runtime(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for SimError {}

impl From<WorkloadError> for SimError {
    fn from(e: WorkloadError) -> Self {
        SimError::Workload(e)
    }
}

/// A running simulation.
pub struct Simulator {
    /// Machine state.
    pub m: Machine,
    /// The class stack, highest priority first.
    pub classes: Vec<Box<dyn SchedClass>>,
    /// The workload.
    pub wl: Workload,
    /// Configuration.
    pub cfg: SimConfig,
    /// Effective tunables.
    pub tunables: TunableSet,
    events: EventQueue,
    sync: SyncState,
    end: Option<Ns>,
    finished_at: Option<Ns>,
    cs_cost: Ns,
    mig_cost: Ns,
    calib_rate: (u64, u64),
    ns_per_loop: Option<u64>,
    instance_counter: Vec<u32>,
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
    /// 6.12 fair servers (None: 6.1, or no RT task can exist).
    server: Option<server::FairServer>,
    /// SCHED_DEADLINE bandwidth admitted (`dl_b->total_bw`, tasks only) and
    /// the limit for tasks, BW_SHIFT fixed point.
    dl_bw: (u64, u64),
    autogroups: Vec<(String, usize)>,
    steps_without_time: u64,
    last_step_time: Ns,
    task_start: Vec<Ns>,
    error: Option<SimError>,
}

/// OS noise (engine tunables `noise_interval_us`, `noise_runtime_us`): one
/// pinned SCHED_OTHER thread per CPU, like the per-CPU kernel threads
/// (kworker, ksoftirqd, rcu) of a real machine, that wakes after a seeded
/// random gap, runs briefly and sleeps again.
///
/// Why: without any disturbance the model is exactly periodic, and periodic
/// load balancing can phase-lock onto the same victim task for a whole run
/// (3 hogs on 2 CPUs: one task is always the one migrated). A real machine
/// is never that quiet: tracing 3 hogs on this project's 2-CPU host shows
/// rcu_preempt, kdamond and other threads waking every few hundred ms and
/// the migrated task changing irregularly (docs/model.md, "OS noise").
fn add_noise_threads(wl: &mut Workload, tunables: &TunableSet, cpus: usize) {
    let interval = tunables.get("noise_interval_us").unwrap_or(0).max(0) as Ns * 1_000;
    if interval == 0 {
        return;
    }
    let runtime = tunables.get("noise_runtime_us").unwrap_or(20).max(1) as Ns * 1_000;
    for cpu in 0..cpus {
        let name = format!("noise/{cpu}");
        wl.tasks.push(TaskDef {
            name: name.clone(),
            instances: 1,
            delay: 0,
            loops: None,
            process: "[noise]".into(),
            attrs: Attrs {
                cpus: Some(vec![cpu]),
                ..Attrs::default()
            },
            phases: vec![Phase {
                name,
                loops: 1,
                attrs: Attrs::default(),
                events: vec![Event::SleepAbout(interval), Event::Runtime(runtime)],
            }],
            daemon: true,
        });
    }
}

/// `__checkparam_dl` and the root-domain affinity rule (linux-rt-dl.md §6).
fn check_dl(wl: &Workload, a: &Attrs, path: &str, cpus: usize) -> Result<(), SimError> {
    let base = path.strip_suffix(".policy").unwrap_or(path);
    let d = crate::task::DlAttr::from_attrs(Policy::Deadline, a);
    let err = |key: &str, msg: String| -> Result<(), SimError> {
        Err(WorkloadError::at(&wl.source, &format!("{base}.{key}"), msg).into())
    };
    if d.runtime < 1024 {
        return err(
            "dl-runtime",
            format!(
                "SCHED_DEADLINE needs dl-runtime of at least 1024 ns, found {} ns",
                d.runtime
            ),
        );
    }
    if !(d.runtime <= d.deadline && d.deadline <= d.period) {
        return err(
            "dl-deadline",
            format!(
                "SCHED_DEADLINE needs dl-runtime <= dl-deadline <= dl-period, found {} / {} / {} us",
                d.runtime / 1000,
                d.deadline / 1000,
                d.period / 1000
            ),
        );
    }
    if !(100_000..=(1u64 << 22) * 1000).contains(&d.period) {
        return err(
            "dl-period",
            format!(
                "SCHED_DEADLINE period must be 100 us..4194304 us (sched_deadline_period_{{min,max}}_us), found {} us",
                d.period / 1000
            ),
        );
    }
    if a.cpus.as_ref().is_some_and(|v| {
        let mut s: Vec<usize> = v.clone();
        s.sort_unstable();
        s.dedup();
        s.len() < cpus
    }) {
        return err(
            "cpus",
            "a SCHED_DEADLINE task's affinity must span every CPU of its root domain (the kernel returns EPERM)".into(),
        );
    }
    Ok(())
}

/// SCHED_DEADLINE bandwidth available to tasks on `cpus` CPUs, in the
/// kernel's fixed point (`__dl_overflow`): 0.95 per CPU
/// (sched_rt_runtime_us / sched_rt_period_us), less the 6.12 fair servers'
/// 50/1000 per CPU, which count in `total_bw`.
pub(crate) fn dl_bw_limit(cpus: usize, fair_servers: bool) -> u64 {
    let per_cpu = ((950_000u64 << 20) / 1_000_000)
        - if fair_servers {
            (50_000u64 << 20) / 1_000_000
        } else {
            0
        };
    per_cpu * cpus as u64
}

fn policy_path(wl: &Workload, ti: usize, phase: Option<usize>) -> String {
    let t = &wl.tasks[ti];
    match phase {
        Some(p) if !(t.phases.len() == 1 && t.phases[0].name == t.name) => {
            format!("tasks.{}.phases.{}", t.name, t.phases[p].name)
        }
        _ => format!("tasks.{}", t.name),
    }
}

impl Simulator {
    /// Build a simulation of `wl` under `cfg`.
    pub fn new(mut wl: Workload, cfg: SimConfig) -> Result<Self, SimError> {
        let tunables = cfg.scheduler.tunables(&cfg.set).map_err(SimError::Config)?;
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
        add_noise_threads(&mut wl, &tunables, cfg.cpus);
        let autogroup = tunables.get("autogroup").unwrap_or(0) != 0;
        let m = Machine {
            now: 0,
            hz: cfg.hz,
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
            stats: Stats::default(),
            trace: cfg.trace.then(Trace::default),
            migrations: vec![],
            online: topo.all(),
            timers: vec![],
            topo,
        };
        let mut sim = Simulator {
            m,
            classes: vec![],
            cs_cost: tunables.get("context_switch_ns").unwrap_or(0) as Ns,
            mig_cost: tunables.get("migration_ns").unwrap_or(0) as Ns,
            tunables,
            events: EventQueue::default(),
            sync: SyncState::default(),
            end,
            finished_at: None,
            calib_rate,
            ns_per_loop,
            instance_counter: vec![0; wl.tasks.len()],
            next_pid: 1000,
            next_tick: (0, 0),
            process_index: std::collections::HashMap::new(),
            autogroup,
            server: None,
            freq_levels: vec![],
            gov_busy: vec![],
            gov_step: 0,
            dl_bw: (0, 0),
            autogroups: vec![],
            steps_without_time: 0,
            last_step_time: 0,
            task_start: vec![],
            error: None,
            cfg,
            wl,
        };
        sim.build_groups();
        if sim.autogroup {
            sim.build_autogroups();
        }
        let version = match sim.cfg.scheduler {
            SchedulerKind::Eevdf => Version::Eevdf,
            SchedulerKind::Cfs => Version::Cfs,
        };
        let params = FairParams::new(version, &sim.tunables, sim.cfg.cpus);
        if version == Version::Cfs && sim.uses_custom_slice() {
            sim.wl.warnings.push(
                "dl-runtime on a fair policy requests a custom slice, which Linux 6.1 (cfs) ignores".into(),
            );
        }
        let rt = RtParams {
            // 6.1 throttles RT per CPU; 6.12 has the fair server instead.
            throttling: version == Version::Cfs,
            ..RtParams::default()
        };
        sim.dl_bw.1 = dl_bw_limit(sim.m.nr_cpus(), version == Version::Eevdf);
        let swap_rule = sim.tunables.get("illf_swap_rule").unwrap_or(1) != 0;
        sim.classes.push(Box::new(Dl::new(
            &sim.m,
            crate::policy::dl_order(sim.cfg.dl_policy, swap_rule),
        )));
        sim.classes.push(Box::new(Rt::new(rt, &sim.m)));
        if version == Version::Eevdf && sim.wl.uses_rt() {
            sim.server = Some(server::FairServer::new(sim.m.nr_cpus()));
        }
        sim.classes.push(Box::new(Fair::new(params, &sim.m)));
        sim.init_barriers();
        sim.start();
        if let Some(e) = sim.error.take() {
            // Admission control refused a task at start.
            return Err(e);
        }
        Ok(sim)
    }

    fn uses_custom_slice(&self) -> bool {
        self.wl.tasks.iter().any(|t| {
            t.attrs.dl_runtime.is_some() || t.phases.iter().any(|p| p.attrs.dl_runtime.is_some())
        })
    }

    fn validate(wl: &Workload, cpus: usize) -> Result<(), SimError> {
        let check = |a: &Attrs, path: String| -> Result<(), SimError> {
            let p = a.policy.unwrap_or(wl.default_policy);
            if let Some(c) = a.cpus.as_ref().and_then(|v| v.iter().find(|c| **c >= cpus)) {
                return Err(WorkloadError::at(
                    &wl.source,
                    &format!("{path}.cpus"),
                    format!(
                        "CPU {c} does not exist on a {cpus}-CPU machine (expected 0..={})",
                        cpus - 1
                    ),
                )
                .into());
            }
            if p == Policy::Deadline {
                check_dl(wl, a, &path, cpus)?;
            }
            Ok(())
        };
        for (ti, t) in wl.tasks.iter().enumerate() {
            check(&t.attrs, policy_path(wl, ti, None))?;
            for (pi, ph) in t.phases.iter().enumerate() {
                check(&t.attrs.overlay(&ph.attrs), policy_path(wl, ti, Some(pi)))?;
            }
        }
        Ok(())
    }

    /// Task groups: declared cgroups (with their ancestors), then one
    /// autogroup per process when autogroup is on.
    fn build_groups(&mut self) {
        let mut paths: Vec<String> = self.wl.taskgroups.iter().map(|g| g.path.clone()).collect();
        for t in &self.wl.tasks {
            for a in std::iter::once(&t.attrs).chain(t.phases.iter().map(|p| &p.attrs)) {
                if let Some(g) = &a.taskgroup {
                    if g != "/" && !paths.contains(g) {
                        paths.push(g.clone());
                    }
                }
            }
        }
        for p in paths {
            self.group_id(&p);
        }
    }

    /// One autogroup per process (`autogroup.c`): as if every process had
    /// been started in its own session with `setsid()`.
    fn build_autogroups(&mut self) {
        for t in &self.wl.tasks {
            if self.autogroups.iter().any(|(p, _)| *p == t.process) {
                continue;
            }
            self.m.groups.push(TaskGroup {
                path: format!("/autogroup-{}", self.autogroups.len() + 1),
                parent: Some(0),
                shares: 1024,
            });
            self.autogroups
                .push((t.process.clone(), self.m.groups.len() - 1));
        }
    }

    /// Group of a task object's thread in a phase: its cgroup, else its
    /// process's autogroup, else the root (autogroup.c: only tasks of the
    /// root cgroup use their autogroup).
    pub(crate) fn group_of(&self, def: usize, a: &Attrs) -> usize {
        match a.taskgroup.as_deref() {
            Some(g) if g != "/" => self.m.groups.iter().position(|x| x.path == g).unwrap_or(0),
            _ => {
                let proc_name = &self.wl.tasks[def].process;
                self.autogroups
                    .iter()
                    .find(|(p, _)| p == proc_name)
                    .map_or(0, |x| x.1)
            }
        }
    }

    /// Index of the group at `path`, creating it and its ancestors.
    fn group_id(&mut self, path: &str) -> usize {
        if path == "/" || path.is_empty() {
            return 0;
        }
        if let Some(i) = self.m.groups.iter().position(|g| g.path == path) {
            return i;
        }
        let parent_path = match path.rfind('/') {
            Some(0) | None => "/".to_string(),
            Some(i) => path[..i].to_string(),
        };
        let parent = self.group_id(&parent_path);
        let shares = self
            .wl
            .taskgroups
            .iter()
            .find(|g| g.path == path)
            .map_or(1024, |g| g.shares);
        self.m.groups.push(TaskGroup {
            path: path.to_string(),
            parent: Some(parent),
            shares,
        });
        self.m.groups.len() - 1
    }

    fn init_barriers(&mut self) {
        for t in &self.wl.tasks {
            for ph in &t.phases {
                for e in &ph.events {
                    if let Event::Barrier(b) = e {
                        self.sync.barriers.entry(b.clone()).or_default().parties +=
                            t.instances as usize;
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
        self.next_tick = (self.m.tick_ns(), 0);
        if let Some(end) = self.end {
            self.events.push(end, EventKind::End);
        }
        for d in 0..self.wl.tasks.len() {
            for _ in 0..self.wl.tasks[d].instances {
                self.fork_task(d, None, 0);
            }
        }
        self.process_pending();
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
        while let Some(t) = self.next_time() {
            if t > limit || self.finished_at.is_some() {
                break;
            }
            // At equal times: segment ends (lowest CPU first), then queued
            // events in (time, sequence) order, then ticks (lowest CPU
            // first). Deterministic.
            let seg = self.m.rqs.iter().position(|r| r.seg_end == Some(t));
            let kind = if let Some(cpu) = seg {
                self.m.rqs[cpu].seg_end = None;
                EventKind::SegmentEnd { cpu }
            } else if self.events.peek_time() == Some(t) {
                match self.events.pop() {
                    Some(ev) => ev.kind,
                    None => break,
                }
            } else {
                let (at, cpu) = self.next_tick;
                self.next_tick = if cpu + 1 < self.m.nr_cpus() {
                    (at, cpu + 1)
                } else {
                    (at + self.m.tick_ns(), 0)
                };
                EventKind::Tick(cpu)
            };
            self.m.now = t;
            self.m.stats.events += 1;
            self.handle(kind)?;
            self.process_pending();
            self.queue_class_timers();
            if let Some(e) = self.error.take() {
                return Err(e);
            }
        }
        Ok(self.is_done())
    }

    /// Check every class's invariants and the engine's own (tests use this
    /// between steps).
    pub fn check_invariants(&self) -> Result<(), String> {
        for c in &self.classes {
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

    /// Time of the next event (queued or segment end).
    fn next_time(&self) -> Option<Ns> {
        let seg = self.m.rqs.iter().filter_map(|r| r.seg_end).min();
        let queued = match (seg, self.events.peek_time()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Ticks alone never keep a run going: with nothing else pending,
        // every task has exited or sleeps forever.
        queued.map(|q| q.min(self.next_tick.0))
    }

    /// Whether the run is over.
    pub fn is_done(&self) -> bool {
        self.finished_at.is_some() || self.next_time().is_none()
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
            EventKind::Tick(cpu) => self.tick(cpu),
            EventKind::SegmentEnd { cpu } => {
                if let Some(t) = self.m.rqs[cpu].curr {
                    self.settle(cpu);
                    self.m.tasks[t].prog.busy = None;
                    self.step(t)?;
                }
            }
            EventKind::Wake { task, gen } => {
                if self.m.tasks[task].sleep_gen == gen {
                    let cpu = self.m.tasks[task].cpu;
                    self.try_to_wake_up(task, crate::class::Waker { cpu, task: None });
                }
            }
            EventKind::ServerTimer { cpu } => self.server_timer(cpu),
            EventKind::GovernorTick => self.governor_tick(),
            EventKind::Hotplug { idx } => self.hotplug(idx),
            EventKind::ClassTimer { class, cpu, tag } => {
                self.classes[class].timer(&mut self.m, cpu, tag);
            }
            EventKind::End => self.finished_at = Some(self.m.now),
        }
        Ok(())
    }

    fn tick(&mut self, cpu: usize) {
        if !self.m.online.contains(cpu) {
            return;
        }
        self.server_update(cpu);
        if let Some(t) = self.m.rqs[cpu].curr {
            let c = self.class_of(t);
            self.classes[c].task_tick(&mut self.m, cpu, t);
        }
        for c in 0..self.classes.len() {
            self.classes[c].tick_balance(&mut self.m, cpu);
        }
    }

    /// Set initial frequencies and arm the governor (engine/governor.rs).
    fn start_governor(&mut self) {
        use governor::Governor;
        let n = self.m.nr_cpus();
        self.freq_levels = (0..n)
            .map(|c| governor::levels(self.m.topo.cpu(c).max_freq_khz, &self.cfg.freq_levels_mhz))
            .collect();
        self.gov_busy = vec![0; n];
        for cpu in 0..n {
            let lv = &self.freq_levels[cpu];
            let f = match self.cfg.governor {
                Governor::Performance | Governor::Ondemand => lv.last().copied(),
                Governor::Powersave => lv.first().copied(),
                _ => None,
            };
            if let Some(f) = f {
                self.m.rqs[cpu].freq_khz = f;
            }
        }
        match &self.cfg.governor {
            Governor::Ondemand => self
                .events
                .push(governor::SAMPLING_PERIOD, EventKind::GovernorTick),
            Governor::Schedule(steps) => {
                if let Some((at, _)) = steps.first() {
                    self.events.push(*at, EventKind::GovernorTick);
                }
            }
            _ => {}
        }
    }

    /// The governor's periodic sample (ondemand) or next step (schedule).
    fn governor_tick(&mut self) {
        use governor::Governor;
        let now = self.m.now;
        match self.cfg.governor.clone() {
            Governor::Ondemand => {
                for cpu in 0..self.m.nr_cpus() {
                    let rq = &self.m.rqs[cpu];
                    let running = if rq.curr.is_some() {
                        now - rq.curr_since
                    } else {
                        0
                    };
                    let busy = rq.busy_ns + running;
                    let load =
                        (busy - self.gov_busy[cpu].min(busy)) * 100 / governor::SAMPLING_PERIOD;
                    self.gov_busy[cpu] = busy;
                    let f = governor::ondemand_target(load.min(100), &self.freq_levels[cpu]);
                    self.set_freq(cpu, f);
                }
                // Sampling alone never keeps a run going (like the tick).
                let alive = self.events.peek_time().is_some()
                    || self.m.rqs.iter().any(|r| r.seg_end.is_some());
                if alive {
                    self.events
                        .push(now + governor::SAMPLING_PERIOD, EventKind::GovernorTick);
                }
            }
            Governor::Schedule(steps) => {
                while let Some(&(_, khz)) = steps.get(self.gov_step).filter(|(at, _)| *at <= now) {
                    for cpu in 0..self.m.nr_cpus() {
                        let f = khz.min(self.m.topo.cpu(cpu).max_freq_khz);
                        self.set_freq(cpu, f);
                    }
                    self.gov_step += 1;
                }
                if let Some((at, _)) = steps.get(self.gov_step) {
                    self.events.push(*at, EventKind::GovernorTick);
                }
            }
            _ => {}
        }
    }

    /// Change `cpu`'s frequency at `m.now`: work done so far is accounted at
    /// the old rate and the running segment re-timed at the new one.
    pub(crate) fn set_freq(&mut self, cpu: usize, khz: u64) {
        if self.m.rqs[cpu].freq_khz == khz {
            return;
        }
        self.settle(cpu);
        for c in 0..self.classes.len() {
            self.classes[c].update_curr(&mut self.m, cpu);
        }
        let now = self.m.now;
        let rq = &mut self.m.rqs[cpu];
        let (old, since) = (rq.freq_khz, rq.freq_since);
        match rq.freq_time.iter_mut().find(|(f, _)| *f == old) {
            Some(e) => e.1 += now - since,
            None => rq.freq_time.push((old, now - since)),
        }
        rq.freq_khz = khz;
        rq.freq_since = now;
        if rq.seg_end.is_some() {
            let delay = rq.seg_start.saturating_sub(now);
            self.start_segment(cpu, delay);
        }
    }

    /// Move class timer requests into the event queue.
    fn queue_class_timers(&mut self) {
        for r in std::mem::take(&mut self.m.timers) {
            self.events.push(
                r.at,
                EventKind::ClassTimer {
                    class: r.class,
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
        }
        metrics::collect(&self.m, &self.wl, &self.cfg, &self.tunables, end)
    }
}
