//! `schedlab-worker`: the native worker of the real-kernel runner (issue 5).
//!
//! One worker process stands for one workload process; it runs one OS
//! thread per workload task, each executing an rt-app-like program on the
//! live kernel:
//!
//! * `schedlab-worker calibrate [CPU]` prints the cost of one busy-loop
//!   iteration in ns (the fastest of several timed runs) on CPU (default:
//!   where it runs), as rt-app calibrates `run` on its calibration CPU;
//! * `schedlab-worker run PLAN.json` runs a plan (below) and prints one JSON
//!   line per thread when it starts (`{"thread", "tid"}`) and when it ends
//!   (`{"thread", "tid", "loops", "cpu_ns", "overruns", "started_ns",
//!   "finished_ns", "busy_cpu_ns", "overhead_cpu_ns", "proc",
//!   "sleep_lateness_ns"}`, times in CLOCK_MONOTONIC ns, `proc` the
//!   thread's own /proc counters over its program, `sleep_lateness_ns` how
//!   late it ran after its sleeps and timers: count, p50, p90, p99, max);
//! * `schedlab-worker pingpong CPU ROUNDS` prints the mean ns of one
//!   round trip between two threads pinned to CPU through a socket pair
//!   (two context switches and two pipe calls each way, as `perf bench
//!   sched pipe`);
//! * `schedlab-worker wakeup FROM TO ROUNDS` prints the median ns from a
//!   write on CPU FROM to the blocked reader on idle CPU TO running again.
//!
//! Each thread (attrs.rs) names itself (comm), joins its cgroup, sets its
//! affinity and its `sched_setattr` attributes (policy, nice / RT priority
//! / DEADLINE parameters / fair slice), keeping the kernel's timer slack, *before*
//! work starts, waits for the common start time, then runs its events
//! (program.rs) until its loop count or the end time. `run` is busy work
//! (calibrated loops, or thread CPU time), `runtime` busy wall time,
//! `sleep` a relative sleep, `timer` an absolute periodic wakeup (rt-app's
//! timer), `yield` sched_yield.
//!
//! Safety: the worker asks the kernel to kill it when its parent (the
//! runner) dies (PR_SET_PDEATHSIG), and every thread stops at the plan's
//! end time by itself. A DEADLINE thread is never switched back to another
//! policy: it exits (or is killed) while still DEADLINE, which is what
//! returns its bandwidth (host.md §2, the DL bandwidth leak). The worker
//! changes no system setting; the runner owns cgroups and tracing.

mod attrs;
mod counters;
mod event;
mod pingpong;
mod program;
mod sync;

use program::{now_ns, Work};
use serde::Deserialize;

/// A plan for one worker process.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Plan {
    /// CLOCK_MONOTONIC ns at which every thread starts (0: at once).
    #[serde(default)]
    start_at_ns: u64,
    /// CLOCK_MONOTONIC ns at which every thread stops; or
    #[serde(default)]
    end_at_ns: u64,
    /// how long after the start they stop (a guest that cannot read the
    /// host's clock, `schedlab vm`, gives this instead of `end_at_ns`).
    #[serde(default)]
    duration_ns: u64,
    /// Cost of one busy-loop iteration, ns (from `calibrate`).
    ns_per_loop: f64,
    /// Unit of `run` work.
    #[serde(default = "default_work")]
    work: Work,
    /// The shared file of sync objects (sync.rs) and its number of slots.
    #[serde(default)]
    sync_file: Option<String>,
    #[serde(default)]
    sync_slots: usize,
    threads: Vec<ThreadPlan>,
}

/// One thread of a plan.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadPlan {
    name: String,
    #[serde(default)]
    nice: i32,
    #[serde(default = "default_policy")]
    policy: String,
    #[serde(default)]
    rt_priority: i32,
    /// SCHED_DEADLINE runtime / deadline / period, ns.
    #[serde(default)]
    dl_runtime_ns: u64,
    #[serde(default)]
    dl_deadline_ns: u64,
    #[serde(default)]
    dl_period_ns: u64,
    /// Custom fair slice, ns (0: the kernel's base slice).
    #[serde(default)]
    slice_ns: u64,
    /// Files the thread writes its tid to, in order, to join its cgroup:
    /// a v1 `tasks` file, or cgroup2 `cgroup.procs` of the threaded domain
    /// then the group's `cgroup.threads`.
    #[serde(default)]
    cgroup_files: Vec<String>,
    #[serde(default)]
    cpus: Option<Vec<usize>>,
    #[serde(default)]
    delay_ns: u64,
    /// Repetitions of the event list; None = until the end time.
    #[serde(default)]
    loops: Option<u64>,
    /// Events as JSON arrays (event.rs).
    events: Vec<serde_json::Value>,
}

/// What every thread of a run shares.
pub struct RunParams {
    start: u64,
    end: u64,
    ns_per_loop: f64,
    work: Work,
}

fn default_policy() -> String {
    "SCHED_OTHER".into()
}

fn default_work() -> Work {
    Work::Loops
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("calibrate") => {
            // On the CPU given (rt-app's `"calibration": "CPUn"`), else where it runs.
            if let Some(cpu) = args.get(2) {
                let Some(cpu) = cpu
                    .parse::<usize>()
                    .ok()
                    .filter(|c| *c < libc::CPU_SETSIZE as usize)
                else {
                    eprintln!("usage: schedlab-worker calibrate [CPU]");
                    std::process::exit(2);
                };
                if let Err(e) = pingpong::pin(cpu) {
                    eprintln!("schedlab-worker: calibrate on CPU {cpu}: {e}");
                    std::process::exit(1);
                }
            }
            println!("{{\"ns_per_loop\": {:.6}}}", program::calibrate())
        }
        Some("pingpong") => {
            let parse = |i: usize| args.get(i).and_then(|s| s.parse::<u64>().ok());
            let (Some(cpu), Some(rounds)) = (parse(2), parse(3)) else {
                eprintln!("usage: schedlab-worker pingpong CPU ROUNDS");
                std::process::exit(2);
            };
            if cpu >= libc::CPU_SETSIZE as u64 || rounds == 0 || rounds > 100_000_000 {
                eprintln!(
                    "schedlab-worker: pingpong: CPU below {} and 1..=100000000 rounds",
                    libc::CPU_SETSIZE
                );
                std::process::exit(2);
            }
            match pingpong::round_trip_ns(cpu as usize, rounds) {
                Ok(ns) => println!("{{\"round_trip_ns\": {ns:.1}}}"),
                Err(e) => {
                    eprintln!("schedlab-worker: pingpong: {e}");
                    std::process::exit(1);
                }
            }
        }
        Some("wakeup") => {
            let parse = |i: usize| args.get(i).and_then(|s| s.parse::<u64>().ok());
            let (Some(from), Some(to), Some(rounds)) = (parse(2), parse(3), parse(4)) else {
                eprintln!("usage: schedlab-worker wakeup FROM_CPU TO_CPU ROUNDS");
                std::process::exit(2);
            };
            let max = libc::CPU_SETSIZE as u64;
            if from >= max || to >= max || rounds == 0 || rounds > 1_000_000 {
                eprintln!("schedlab-worker: wakeup: CPUs below {max} and 1..=1000000 rounds");
                std::process::exit(2);
            }
            match pingpong::remote_wake_ns(from as usize, to as usize, rounds) {
                Ok(ns) => println!("{{\"remote_wake_p50_ns\": {ns}}}"),
                Err(e) => {
                    eprintln!("schedlab-worker: wakeup: {e}");
                    std::process::exit(1);
                }
            }
        }
        Some("run") => {
            // SAFETY: ask to be killed with the runner; plain integer arguments.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            let Some(path) = args.get(2) else {
                eprintln!("usage: schedlab-worker run PLAN.json");
                std::process::exit(2);
            };
            let plan: Plan = match std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()))
            {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("schedlab-worker: {path}: {e}");
                    std::process::exit(2);
                }
            };
            let start = if plan.start_at_ns == 0 {
                now_ns()
            } else {
                plan.start_at_ns
            };
            let end = match (plan.end_at_ns, plan.duration_ns) {
                (0, d) if d > 0 => start.saturating_add(d),
                (e, 0) if e > 0 => e,
                _ => {
                    eprintln!(
                        "schedlab-worker: {path}: give exactly one of end_at_ns and duration_ns"
                    );
                    std::process::exit(2);
                }
            };
            let run = std::sync::Arc::new(RunParams {
                start,
                end,
                ns_per_loop: plan.ns_per_loop.max(1e-3),
                work: plan.work,
            });
            let shared = match &plan.sync_file {
                Some(p) => match sync::Shared::map(p, plan.sync_slots) {
                    Ok(s) => Some(std::sync::Arc::new(s)),
                    Err(e) => {
                        eprintln!("schedlab-worker: {e}");
                        std::process::exit(2);
                    }
                },
                None => None,
            };
            let handles: Vec<_> = plan
                .threads
                .into_iter()
                .map(|t| {
                    let (run, shared) = (run.clone(), shared.clone());
                    std::thread::spawn(move || {
                        let r = program::run_thread(t, &run, shared.as_deref());
                        if let Err(e) = &r {
                            // Fail fast: the other threads would otherwise
                            // run on to the end time for nothing.
                            eprintln!("schedlab-worker: {e}");
                            std::process::exit(1);
                        }
                        r
                    })
                })
                .collect();
            let mut failed = false;
            for h in handles {
                match h.join() {
                    Ok(Ok(line)) => println!("{line}"),
                    Ok(Err(_)) | Err(_) => failed = true,
                }
            }
            std::process::exit(if failed { 1 } else { 0 });
        }
        _ => {
            eprintln!("usage: schedlab-worker calibrate [CPU] | run PLAN.json");
            std::process::exit(2);
        }
    }
}
