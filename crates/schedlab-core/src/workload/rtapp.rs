//! rt-app JSON → [`Workload`], following the grammar of
//! ../shared/formats.md §1.2 (defaults from rt-app's `rt-app_parse_config.c`).
//!
//! Strictness: unknown keys, wrong types and impossible values are errors
//! naming the file and JSON path. Keys rt-app knows but the simulator does not
//! model (logging, uclamp, NUMA binding) are accepted with a warning that the
//! run result carries, never silently.

use super::json::{self, Json};
use super::*;
use crate::clock::USEC;

/// Event keys are recognised by prefix, in rt-app's order (`obj_is_event`):
/// `runtime0` is a `runtime`, not a `run`.
const EVENT_PREFIXES: &[&str] = &[
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer",
    "suspend", "resume", "memrun", "mem", "iorun", "yield", "barrier", "fork", "sem_post",
    "sem_wait",
];

/// rt-app events the simulator does not model, with why and what to do.
const UNSUPPORTED_EVENTS: &[(&str, &str)] = &[
    ("memrun", "memory chase/read/write loops need a cache and memory model, which the simulator does not have; replace it by a `run` of the time it takes on the target machine"),
    ("mem", "rt-app's memload (memset of the count in bytes on a per-thread buffer) needs a memory-bandwidth model, which the simulator does not have; replace it by a `run` of the time it takes on the target machine"),
    ("iorun", "rt-app's ioload (writing the count in bytes to global.io_device) needs an I/O model, which the simulator does not have; replace it by a `run` (for /dev/null) or a `sleep` (for a device that blocks)"),
    ("sem_post", "POSIX semaphores are not modelled (mutexes, condition variables, barriers and suspend/resume are)"),
    ("sem_wait", "POSIX semaphores are not modelled (mutexes, condition variables, barriers and suspend/resume are)"),
];

const IGNORED_ATTR_KEYS: &[&str] = &["util_min", "util_max", "nodes_membind"];

const IGNORED_GLOBAL_KEYS: &[&str] = &[
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
];

/// Largest time in microseconds a workload may give (`run`, `sleep`,
/// `timer.period`, `delay`, `dl-*`, ...): the largest whose nanoseconds fit
/// in simulated time (`u64` ns).
pub const MAX_USECS: u64 = u64::MAX / USEC;

/// Largest `global.duration` in seconds (its nanoseconds fit in `u64`).
pub const MAX_SECS: u64 = u64::MAX / crate::clock::SEC;

struct Parser<'a> {
    file: &'a str,
    warnings: Vec<String>,
    /// The task being parsed (`suspend` waits on its own name).
    task_name: String,
}

type R<T> = Result<T, WorkloadError>;

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        // Not `format!`: every key of every task gets its path, and the
        // formatting machinery cost ten times the copy (500 tasks: 2 % of a
        // 5 s run; issue 18).
        let mut p = String::with_capacity(path.len() + 1 + key.len());
        p.push_str(path);
        p.push('.');
        p.push_str(key);
        p
    }
}

/// Parse rt-app JSON `text`, naming it `file` in errors.
pub fn parse(file: &str, text: &str) -> R<Workload> {
    let root = json::parse(file, text)?;
    let mut p = Parser {
        file,
        warnings: vec![],
        task_name: String::new(),
    };
    let wl = p.workload(&root)?;
    Ok(Workload {
        warnings: p.warnings,
        ..wl
    })
}

impl Parser<'_> {
    fn err<T>(&self, path: &str, msg: impl Into<String>) -> R<T> {
        Err(WorkloadError::at(self.file, path, msg))
    }

    fn obj<'j>(&self, v: &'j Json, path: &str) -> R<&'j [(String, Json)]> {
        match v {
            Json::Obj(kv) => Ok(kv),
            other => self.err(
                path,
                format!("expected an object, found {}", other.describe()),
            ),
        }
    }

    fn int(&self, v: &Json, path: &str, what: &str) -> R<i64> {
        match v {
            Json::Int(i) => Ok(*i),
            other => self.err(path, format!("expected {what}, found {}", other.describe())),
        }
    }

    fn string<'j>(&self, v: &'j Json, path: &str) -> R<&'j str> {
        match v {
            Json::Str(s) => Ok(s),
            other => self.err(
                path,
                format!("expected a string, found {}", other.describe()),
            ),
        }
    }

    fn usecs(&self, v: &Json, path: &str) -> R<Ns> {
        let i = self.int(v, path, "an integer number of microseconds")?;
        if i < 0 {
            return self.err(path, format!("expected a duration >= 0 us, found {i}"));
        }
        match (i as u64).checked_mul(USEC) {
            Some(ns) if i as u64 <= MAX_USECS => Ok(ns),
            _ => self.err(
                path,
                format!(
                    "expected a duration <= {MAX_USECS} us (simulated time is u64 ns), found {i}"
                ),
            ),
        }
    }

    /// Task and process names: what rt-app's own examples use (letters,
    /// digits, `_`, `-`, `.`: "Binder-dummy", "mp3.decoder"). Traces keep them
    /// lossless: ftrace's `COMM-PID` is split at its last `-`, and fields are
    /// separated by spaces, which a name may not hold.
    fn name(&self, s: &str, path: &str, what: &str) -> R<()> {
        let ok = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        if !ok {
            return self.err(
                path,
                format!(
                    "{what} \"{s}\" must match ^[a-zA-Z0-9_.-]+$ (kept lossless between simulated and real traces)"
                ),
            );
        }
        Ok(())
    }

    fn workload(&mut self, root: &Json) -> R<Workload> {
        let top = self.obj(root, "")?;
        let mut global = None;
        let mut tasks = None;
        for (k, v) in top {
            match k.as_str() {
                "global" => global = Some(v),
                "tasks" => tasks = Some(v),
                "resources" => self
                    .warnings
                    .push("resources: ignored (rt-app creates resources on the fly)".into()),
                _ => {
                    return self.err(
                        k,
                        "unknown top-level key; expected \"tasks\", \"global\" or \"resources\"",
                    )
                }
            }
        }
        let Some(tasks) = tasks else {
            return self.err("", "missing required key \"tasks\"");
        };
        let mut wl = Workload {
            source: self.file.to_string(),
            duration: None,
            default_policy: Policy::Other,
            calibration: Calibration::Cpu(0),
            taskgroups: vec![],
            tasks: vec![],
            warnings: vec![],
        };
        if let Some(g) = global {
            self.global(g, &mut wl)?;
        }
        let task_objs = self.obj(tasks, "tasks")?;
        if task_objs.is_empty() {
            return self.err("tasks", "expected at least one task");
        }
        wl.tasks.reserve_exact(task_objs.len());
        for (name, v) in task_objs {
            let path = join("tasks", name);
            self.name(name, &path, "task name")?;
            let t = self.task(name, v, &path, wl.default_policy)?;
            wl.tasks.push(t);
        }
        self.cross_checks(&wl)?;
        Ok(wl)
    }

    fn global(&mut self, g: &Json, wl: &mut Workload) -> R<()> {
        for (k, v) in self.obj(g, "global")? {
            let path = join("global", k);
            match k.as_str() {
                "duration" => {
                    let d = self.int(v, &path, "an integer number of seconds")?;
                    wl.duration = match d {
                        -1 => None,
                        d if d > 0 && d as u64 <= MAX_SECS => Some(d as u64 * crate::clock::SEC),
                        d => return self.err(&path, format!("expected -1 or seconds in 1..={MAX_SECS} (simulated time is u64 ns), found {d}")),
                    };
                }
                "default_policy" => {
                    let s = self.string(v, &path)?;
                    wl.default_policy = self.policy(s, &path)?;
                }
                "calibration" => {
                    wl.calibration = match v {
                        Json::Int(i) if *i > 0 => Calibration::NsPerLoop(*i as u64),
                        Json::Str(s) => match s.strip_prefix("CPU").map(str::parse::<usize>) {
                            Some(Ok(c)) => Calibration::Cpu(c),
                            _ => {
                                return self.err(
                                    &path,
                                    format!("expected \"CPUn\" or ns per loop > 0, found \"{s}\""),
                                )
                            }
                        },
                        other => {
                            return self.err(
                                &path,
                                format!("expected \"CPUn\" or ns per loop > 0, found {}", other.describe()),
                            )
                        }
                    }
                }
                "taskgroups" => {
                    for (gp, gv) in self.obj(v, &path)? {
                        let gpath = join(&path, gp);
                        self.group_path(gp, &gpath)?;
                        let mut shares = 1024;
                        for (gk, sv) in self.obj(gv, &gpath)? {
                            let spath = join(&gpath, gk);
                            if gk != "shares" {
                                return self.err(&spath, "unknown key; expected \"shares\"");
                            }
                            let s = self.int(sv, &spath, "an integer cpu.shares value")?;
                            if !(2..=262_144).contains(&s) {
                                return self
                                    .err(&spath, format!("expected shares in 2..=262144, found {s}"));
                            }
                            shares = s as u64;
                        }
                        wl.taskgroups.push(TaskGroupDef {
                            path: gp.clone(),
                            shares,
                        });
                    }
                }
                k if IGNORED_GLOBAL_KEYS.contains(&k) => self
                    .warnings
                    .push(format!("{path}: ignored (no effect in the simulator)")),
                // rt-app reads the global keys it knows and ignores the rest (json-c
                // lookups, rt-app_parse_config.c parse_global): warn, so a typo shows.
                _ => self.warnings.push(format!(
                    "{path}: unknown global key, ignored as rt-app ignores it (known: duration, default_policy, calibration, taskgroups, and rt-app's logging keys)"
                )),
            }
        }
        Ok(())
    }

    fn group_path(&self, g: &str, path: &str) -> R<()> {
        let ok = g.starts_with('/')
            && g.len() > 1
            && g[1..].split('/').all(|c| {
                !c.is_empty()
                    && c.chars()
                        .all(|x| x.is_ascii_alphanumeric() || "_-.".contains(x))
            });
        if !ok {
            return self.err(
                path,
                format!("expected a cgroup path like \"/group/sub\", found \"{g}\""),
            );
        }
        // "." and ".." would alias another group or leave the run's own cgroup tree.
        if let Some(c) = g[1..].split('/').find(|c| *c == "." || *c == "..") {
            return self.err(
                path,
                format!("cgroup path \"{g}\" has a \"{c}\" component; use plain names like \"/group/sub\""),
            );
        }
        let depth = g[1..].split('/').count();
        if depth > MAX_GROUP_DEPTH {
            return self.err(
                path,
                format!("cgroup path \"{g}\" is {depth} levels deep; at most {MAX_GROUP_DEPTH} are supported"),
            );
        }
        Ok(())
    }

    fn policy(&self, s: &str, path: &str) -> R<Policy> {
        Policy::from_name(s).map_or_else(
            || {
                self.err(
                    path,
                    format!("unknown policy \"{s}\"; expected SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE or SCHED_EXT"),
                )
            },
            Ok,
        )
    }

    /// Parse an attribute key into `a`; false if `k` is not an attribute.
    fn attr(&mut self, k: &str, v: &Json, path: &str, a: &mut Attrs) -> R<bool> {
        match k {
            "policy" => a.policy = Some(self.policy(self.string(v, path)?, path)?),
            "priority" => {
                let p = self.int(v, path, "an integer priority")?;
                a.priority = Some(i32::try_from(p).unwrap_or(i32::MAX));
            }
            "cpus" => {
                let Json::Arr(items) = v else {
                    return self.err(
                        path,
                        format!("expected an array of CPU numbers, found {}", v.describe()),
                    );
                };
                if items.is_empty() {
                    return self.err(path, "expected at least one CPU");
                }
                let mut cpus = vec![];
                for (i, c) in items.iter().enumerate() {
                    let c = self.int(c, &format!("{path}[{i}]"), "a CPU number")?;
                    if c < 0 {
                        return self.err(
                            &format!("{path}[{i}]"),
                            format!("expected a CPU number >= 0, found {c}"),
                        );
                    }
                    cpus.push(c as usize);
                }
                a.cpus = Some(cpus);
            }
            "taskgroup" => {
                let g = self.string(v, path)?;
                if g != "/" && !g.is_empty() {
                    self.group_path(g, path)?;
                }
                a.taskgroup = Some(if g.is_empty() { "/".into() } else { g.into() });
            }
            "dl-runtime" => a.dl_runtime = Some(self.usecs(v, path)?),
            "dl-period" => a.dl_period = Some(self.usecs(v, path)?),
            "dl-deadline" => a.dl_deadline = Some(self.usecs(v, path)?),
            "memory_intensity" => {
                let x = match v {
                    Json::Float(x) if (0.0..=1.0).contains(x) => *x,
                    Json::Int(i) if (0..=1).contains(i) => *i as f64,
                    _ => {
                        return self.err(
                            path,
                            format!("expected a number in 0..1 (fraction of time stalled on memory), found {}", v.describe()),
                        )
                    }
                };
                a.memory_ppm = Some((x * 1e6).round() as u32);
            }
            k if IGNORED_ATTR_KEYS.contains(&k) => self.warnings.push(format!(
                "{path}: ignored (uclamp and NUMA binding are not modelled)"
            )),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn task(&mut self, name: &str, v: &Json, path: &str, default_policy: Policy) -> R<TaskDef> {
        self.task_name = name.to_string();
        let kv = self.obj(v, path)?;
        let mut t = TaskDef {
            name: name.to_string(),
            instances: 1,
            delay: 0,
            loops: None,
            process: name.to_string(),
            attrs: Attrs::default(),
            phases: vec![],
            daemon: false,
        };
        let mut phases_json = None;
        let mut events = vec![];
        for (k, val) in kv {
            let kp = join(path, k);
            match k.as_str() {
                "instance" => {
                    let n = self.int(val, &kp, "an integer number of threads")?;
                    if !(0..=100_000).contains(&n) {
                        return self.err(&kp, format!("expected 0..=100000 threads, found {n}"));
                    }
                    t.instances = n as u32;
                }
                "loop" => {
                    let n = self.int(val, &kp, "an integer loop count")?;
                    t.loops = match n {
                        -1 => None,
                        n if n > 0 => Some(n as u64),
                        n => {
                            return self.err(
                                &kp,
                                format!("expected -1 (forever) or a count > 0, found {n}"),
                            )
                        }
                    };
                }
                "delay" => t.delay = self.usecs(val, &kp)?,
                "process" => {
                    let p = self.string(val, &kp)?;
                    self.name(p, &kp, "process name")?;
                    t.process = p.to_string();
                }
                "phases" => phases_json = Some((val, kp)),
                _ => {
                    if !self.attr(k, val, &kp, &mut t.attrs)? {
                        events.extend(self.event(k, val, &kp)?);
                    }
                }
            }
        }
        match phases_json {
            Some((pj, pp)) => {
                if !events.is_empty() {
                    return self.err(path, "events at task level are not allowed when \"phases\" is given; move them into a phase");
                }
                let phases = self.obj(pj, &pp)?;
                if phases.is_empty() {
                    return self.err(&pp, "expected at least one phase");
                }
                for (pn, pv) in phases {
                    t.phases.push(self.phase(pn, pv, &join(&pp, pn))?);
                }
            }
            None => {
                if events.is_empty() {
                    return self.err(
                        path,
                        "task has no events (expected run, sleep, timer, ... or \"phases\")",
                    );
                }
                t.phases.push(Phase {
                    name: name.to_string(),
                    loops: 1,
                    attrs: Attrs::default(),
                    events,
                });
            }
        }
        for (i, ph) in t.phases.iter().enumerate() {
            let eff = t.attrs.overlay(&ph.attrs);
            let pp = if kv.iter().any(|(k, _)| k == "phases") {
                join(&join(path, "phases"), &ph.name)
            } else {
                path.to_string()
            };
            let _ = i;
            self.check_priority(&eff, default_policy, &pp)?;
        }
        // A workload is read once and kept for the whole run: drop the
        // growth slack (a one-phase task held room for four phases of 176
        // bytes, issue 18's bytes per task).
        for ph in &mut t.phases {
            ph.events.shrink_to_fit();
        }
        t.phases.shrink_to_fit();
        Ok(t)
    }

    fn check_priority(&self, a: &Attrs, default_policy: Policy, path: &str) -> R<()> {
        let policy = a.policy.unwrap_or(default_policy);
        let Some(p) = a.priority else { return Ok(()) };
        let (lo, hi, what) = if policy.takes_nice() {
            (-20, 19, "a nice value")
        } else if policy == Policy::Deadline {
            return Ok(());
        } else {
            (1, 99, "an RT priority")
        };
        if !(lo..=hi).contains(&p) {
            return self.err(
                &join(path, "priority"),
                format!(
                    "expected {what} in {lo}..={hi} for {}, found {p}",
                    policy.name()
                ),
            );
        }
        Ok(())
    }

    fn phase(&mut self, name: &str, v: &Json, path: &str) -> R<Phase> {
        let mut ph = Phase {
            name: name.to_string(),
            loops: 1,
            attrs: Attrs::default(),
            events: vec![],
        };
        for (k, val) in self.obj(v, path)? {
            let kp = join(path, k);
            match k.as_str() {
                "loop" => {
                    let n = self.int(val, &kp, "an integer loop count")?;
                    if n < 1 {
                        return self
                            .err(&kp, format!("expected a phase loop count >= 1, found {n}"));
                    }
                    ph.loops = n as u64;
                }
                "delay" => self.warnings.push(format!(
                    "{kp}: ignored (rt-app honours delay at task level only)"
                )),
                _ => {
                    if !self.attr(k, val, &kp, &mut ph.attrs)? {
                        ph.events.extend(self.event(k, val, &kp)?);
                    }
                }
            }
        }
        if ph.events.is_empty() {
            return self.err(path, "phase has no events");
        }
        Ok(ph)
    }

    /// The events of one rt-app event key (`sync` is two: signal, then wait).
    fn event(&self, key: &str, v: &Json, path: &str) -> R<Vec<Event>> {
        let Some(kind) = EVENT_PREFIXES.iter().find(|p| key.starts_with(**p)) else {
            return self.err(
                path,
                "unknown key; expected an event (run, runtime, sleep, timer, yield, lock, unlock, wait, sync, signal, broad, barrier, suspend, resume, fork, with an optional suffix) or a task/phase attribute",
            );
        };
        if let Some((_, why)) = UNSUPPORTED_EVENTS.iter().find(|(k, _)| k == kind) {
            return self.err(path, format!("event \"{kind}\" is not supported: {why}"));
        }
        Ok(vec![match *kind {
            "run" => Event::Run(self.usecs(v, path)?),
            "runtime" => Event::Runtime(self.usecs(v, path)?),
            "sleep" => Event::Sleep(self.usecs(v, path)?),
            "yield" => Event::Yield,
            "lock" => Event::Lock(self.string(v, path)?.into()),
            "unlock" => Event::Unlock(self.string(v, path)?.into()),
            "signal" => Event::Signal(self.string(v, path)?.into()),
            "broad" => Event::Broad(self.string(v, path)?.into()),
            "barrier" => Event::Barrier(self.string(v, path)?.into()),
            // The value names what to suspend on, as in rt-app before 32fcddf (2025) and
            // as its own examples (browser, video) need; empty or bare (`"suspend",`, which
            // the old workgen filled in) is the thread's own name, what rt-app now always uses.
            "suspend" => match v {
                Json::Str(s) if !s.is_empty() => Event::Suspend(s.as_str().into()),
                Json::Str(_) => Event::Suspend(self.task_name.as_str().into()),
                _ => {
                    return self.err(
                        path,
                        format!("expected a string (or nothing), found {}", v.describe()),
                    )
                }
            },
            "resume" => Event::Resume(self.string(v, path)?.into()),
            "fork" => Event::Fork(self.string(v, path)?.into()),
            "timer" => self.timer(v, path)?,
            "wait" | "sync" => {
                let (mut cond, mut mutex) = (None, None);
                for (k, x) in self.obj(v, path)? {
                    let kp = join(path, k);
                    match k.as_str() {
                        "ref" => cond = Some(self.string(x, &kp)?.to_string()),
                        "mutex" => mutex = Some(self.string(x, &kp)?.to_string()),
                        _ => return self.err(&kp, "unknown key; expected \"ref\" or \"mutex\""),
                    }
                }
                match (cond, mutex) {
                    // rtapp_sig_and_wait: pthread_cond_signal then pthread_cond_wait, the
                    // mutex held throughout (rt-app.c), so the pair is atomic to other lockers.
                    (Some(cond), Some(mutex)) if *kind == "sync" => {
                        return Ok(vec![
                            Event::Signal(cond.as_str().into()),
                            Event::Wait {
                                cond: cond.into(),
                                mutex: mutex.into(),
                            },
                        ])
                    }
                    (Some(cond), Some(mutex)) => Event::Wait {
                        cond: cond.into(),
                        mutex: mutex.into(),
                    },
                    _ => return self.err(path, "expected both \"ref\" and \"mutex\""),
                }
            }
            _ => {
                return self.err(
                    path,
                    format!("event \"{kind}\" is not supported by the simulator yet"),
                )
            }
        }])
    }

    fn timer(&self, v: &Json, path: &str) -> R<Event> {
        let (mut name, mut period, mut mode) = (None, None, TimerMode::Relative);
        for (k, x) in self.obj(v, path)? {
            let kp = join(path, k);
            match k.as_str() {
                "ref" => name = Some(self.string(x, &kp)?.to_string()),
                "period" => {
                    let p = self.usecs(x, &kp)?;
                    if p == 0 {
                        return self.err(&kp, "expected a period > 0 us, found 0");
                    }
                    period = Some(p);
                }
                "mode" => {
                    mode = match self.string(x, &kp)? {
                        "relative" => TimerMode::Relative,
                        "absolute" => TimerMode::Absolute,
                        s => {
                            return self.err(
                                &kp,
                                format!("expected \"relative\" or \"absolute\", found \"{s}\""),
                            )
                        }
                    }
                }
                _ => return self.err(&kp, "unknown key; expected \"ref\", \"period\" or \"mode\""),
            }
        }
        match (name, period) {
            (Some(name), Some(period)) => Ok(Event::Timer { name, period, mode }),
            (None, _) => self.err(path, "missing \"ref\""),
            (_, None) => self.err(path, "missing \"period\""),
        }
    }

    fn cross_checks(&self, wl: &Workload) -> R<()> {
        for t in &wl.tasks {
            for ph in &t.phases {
                for e in &ph.events {
                    if let Event::Fork(target) = e {
                        if wl.task(target).is_none() {
                            return self.err(
                                &format!("tasks.{}", t.name),
                                format!("fork of unknown task \"{target}\""),
                            );
                        }
                    }
                }
            }
        }
        if wl.tasks.iter().all(|t| t.instances == 0) {
            return self.err("tasks", "every task has \"instance\": 0; nothing would run");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(src: &str) -> WorkloadError {
        parse("w.json", src).expect_err("should fail")
    }

    #[test]
    fn single_phase_task_with_prefixed_events() {
        let w = parse(
            "w.json",
            r#"{"global": {"duration": 2}, "tasks": {"t": {"loop": 3, "priority": 5,
                 "run0": 100, "sleep1": 50, "runtime": 10, "run1": 7}}}"#,
        )
        .expect("valid");
        let t = &w.tasks[0];
        assert_eq!(t.loops, Some(3));
        assert_eq!(t.attrs.priority, Some(5));
        assert_eq!(
            t.phases[0].events,
            vec![
                Event::Run(100_000),
                Event::Sleep(50_000),
                Event::Runtime(10_000),
                Event::Run(7_000)
            ]
        );
        assert_eq!(w.duration, Some(2_000_000_000));
    }

    #[test]
    fn errors_name_path_and_expectation() {
        let e = err(r#"{"tasks": {"t": {"run": "x"}}}"#);
        assert_eq!(e.path, "tasks.t.run");
        assert!(e
            .message
            .contains("expected an integer number of microseconds"));
        let e = err(r#"{"tasks": {"t": {"bogus": 1}}}"#);
        assert_eq!(e.path, "tasks.t.bogus");
        let e = err(r#"{"tasks": {"t": {"run": 1, "priority": 30}}}"#);
        assert_eq!(e.path, "tasks.t.priority");
        let e = err(r#"{"tasks": {"t": {"phases": {"a": {"loop": 0, "run": 1}}}}}"#);
        assert_eq!(e.path, "tasks.t.phases.a.loop");
        let deep = format!("/{}", vec!["g"; MAX_GROUP_DEPTH + 1].join("/"));
        let e = err(&format!(
            r#"{{"tasks": {{"t": {{"run": 1, "taskgroup": "{deep}"}}}}}}"#
        ));
        assert_eq!(e.path, "tasks.t.taskgroup");
        assert!(e.message.contains("at most 15"), "{}", e.message);
        // Task-group paths stay inside the run's own tree: no "..", ".", empty components or
        // trailing "/" (issue 12), in a task's taskgroup and in global.taskgroups.
        for (g, want) in [
            ("/..", "\"..\" component"),
            ("/a/../b", "\"..\" component"),
            ("/.", "\".\" component"),
            ("/a/./b", "\".\" component"),
            ("/a//b", "expected a cgroup path"),
            ("/a/", "expected a cgroup path"),
            ("a", "expected a cgroup path"),
        ] {
            let e = err(&format!(
                r#"{{"tasks": {{"t": {{"run": 1, "taskgroup": "{g}"}}}}}}"#
            ));
            assert_eq!(e.path, "tasks.t.taskgroup", "{g}");
            assert!(e.message.contains(want), "{g}: {}", e.message);
            let e = err(&format!(
                r#"{{"global": {{"taskgroups": {{"{g}": {{"shares": 2}}}}}}, "tasks": {{"t": {{"run": 1}}}}}}"#
            ));
            assert_eq!(e.path, format!("global.taskgroups.{g}"), "{g}");
            assert!(e.message.contains(want), "{g}: {}", e.message);
        }
        let e = err(r#"{"tasks": {"t": {"run": 1, "fork": "nope"}}}"#);
        assert!(e.message.contains("unknown task"));
    }
}
