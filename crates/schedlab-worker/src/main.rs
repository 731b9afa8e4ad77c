//! `schedlab-worker`: the native worker of the real-kernel runner (issue 5).
//!
//! One worker process stands for one workload process; it runs one OS
//! thread per workload task, each executing an rt-app-like program on the
//! live kernel:
//!
//! * `schedlab-worker calibrate` prints the cost of one busy-loop iteration
//!   in ns (median of several timed runs), as rt-app calibrates `run`;
//! * `schedlab-worker run PLAN.json` runs a plan (below) and prints one JSON
//!   line per thread when it starts (`{"thread", "tid"}`) and when it ends
//!   (`{"thread", "tid", "loops", "cpu_ns", "overruns", "started_ns", "finished_ns"}`,
//!   CLOCK_MONOTONIC).
//!
//! Each thread names itself (comm), sets its affinity, policy and nice /
//! RT priority *before* work starts, asks for a 1 ns timer slack, waits
//! for the common start time, then runs its events until its loop count
//! or the end time. `run` is calibrated busy work, `runtime` busy wall
//! time, `sleep` a relative sleep, `timer` an absolute periodic wakeup
//! (rt-app's timer), `yield` sched_yield.
//!
//! Safety: the worker asks the kernel to kill it when its parent (the
//! runner) dies (PR_SET_PDEATHSIG), and every thread stops at the plan's
//! end time by itself. The worker changes no system setting; the runner
//! owns cgroups and tracing.

use serde::Deserialize;
use std::hint::black_box;

/// A plan for one worker process.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Plan {
    /// CLOCK_MONOTONIC ns at which every thread starts (0: at once).
    #[serde(default)]
    start_at_ns: u64,
    /// CLOCK_MONOTONIC ns at which every thread stops.
    end_at_ns: u64,
    /// Cost of one busy-loop iteration, ns (from `calibrate`).
    ns_per_loop: f64,
    threads: Vec<ThreadPlan>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadPlan {
    name: String,
    #[serde(default)]
    nice: i32,
    #[serde(default = "default_policy")]
    policy: String,
    #[serde(default)]
    rt_priority: i32,
    #[serde(default)]
    cpus: Option<Vec<usize>>,
    #[serde(default)]
    delay_ns: u64,
    /// Repetitions of the event list; None = until the end time.
    #[serde(default)]
    loops: Option<u64>,
    events: Vec<(String, u64)>,
}

fn default_policy() -> String {
    "SCHED_OTHER".into()
}

fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the valid timespec we pass.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn sleep_until(t: u64) {
    let ts = libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: absolute sleep on CLOCK_MONOTONIC with a valid timespec;
    // interruptions just return early and the caller re-checks the clock.
    while now_ns() < t {
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
    }
}

fn spin(loops: u64) {
    let mut x = 0u64;
    for i in 0..loops {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
}

/// ns per busy-loop iteration: the smallest of 7 runs of 20 M iterations,
/// timed in thread CPU time so that time spent preempted on a busy machine
/// does not inflate it (rt-app times wall clock on an idle CPU instead).
fn calibrate() -> f64 {
    let n = 20_000_000u64;
    (0..7)
        .map(|_| {
            let t = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
            spin(n);
            (clock_ns(libc::CLOCK_THREAD_CPUTIME_ID) - t) as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Apply the thread's scheduling attributes; errors are reported, not fatal
/// to other threads.
fn setup(t: &ThreadPlan) -> Result<(), String> {
    let name: Vec<u8> = t.name.bytes().take(15).chain(std::iter::once(0)).collect();
    // SAFETY: prctl with a NUL-terminated buffer of at most 16 bytes; the
    // timer slack and the scheduling calls take plain integers or our own
    // initialised structures.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0);
        libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
        if let Some(cpus) = &t.cpus {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(format!(
                    "{}: sched_setaffinity: {}",
                    t.name,
                    std::io::Error::last_os_error()
                ));
            }
        }
        let policy = match t.policy.as_str() {
            "SCHED_OTHER" => libc::SCHED_OTHER,
            "SCHED_BATCH" => libc::SCHED_BATCH,
            "SCHED_IDLE" => libc::SCHED_IDLE,
            "SCHED_FIFO" => libc::SCHED_FIFO,
            "SCHED_RR" => libc::SCHED_RR,
            p => {
                return Err(format!(
                    "{}: policy {p} is not supported by the worker",
                    t.name
                ))
            }
        };
        let param = libc::sched_param {
            sched_priority: t.rt_priority,
        };
        if libc::sched_setscheduler(0, policy, &param) != 0 {
            return Err(format!(
                "{}: sched_setscheduler({}): {}",
                t.name,
                t.policy,
                std::io::Error::last_os_error()
            ));
        }
        if policy != libc::SCHED_FIFO && policy != libc::SCHED_RR {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            if libc::setpriority(libc::PRIO_PROCESS, tid, t.nice) != 0 {
                return Err(format!(
                    "{}: setpriority({}): {}",
                    t.name,
                    t.nice,
                    std::io::Error::last_os_error()
                ));
            }
        }
    }
    Ok(())
}

fn run_thread(t: ThreadPlan, start: u64, end: u64, ns_per_loop: f64) -> Result<String, String> {
    setup(&t)?;
    // SAFETY: gettid has no arguments.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    println!("{}", serde_json::json!({"thread": t.name, "tid": tid}));
    sleep_until(start + t.delay_ns);
    let first = now_ns();
    let mut next_timer: Option<u64> = None;
    let (mut loops, mut overruns) = (0u64, 0u64);
    'outer: while t.loops.is_none_or(|n| loops < n) {
        for (ev, v) in &t.events {
            if now_ns() >= end {
                break 'outer;
            }
            match ev.as_str() {
                "run" => {
                    // In chunks of about 1 ms, so that the end time is kept.
                    let mut left = (*v as f64 / ns_per_loop) as u64;
                    let chunk = ((1_000_000.0 / ns_per_loop) as u64).max(1);
                    while left > 0 && now_ns() < end {
                        let n = left.min(chunk);
                        spin(n);
                        left -= n;
                    }
                }
                "runtime" => {
                    let until = (now_ns() + v).min(end);
                    while now_ns() < until {
                        spin(1000);
                    }
                }
                "sleep" => sleep_until((now_ns() + v).min(end)),
                "timer" => {
                    let at = next_timer.unwrap_or(first) + v;
                    next_timer = Some(at);
                    if now_ns() < at {
                        sleep_until(at.min(end));
                    } else {
                        overruns += 1;
                    }
                }
                // SAFETY: sched_yield has no arguments.
                "yield" => unsafe {
                    libc::sched_yield();
                },
                e => {
                    return Err(format!(
                        "{}: event {e} is not supported by the worker",
                        t.name
                    ))
                }
            }
        }
        loops += 1;
    }
    let cpu = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
    let (started_ns, finished_ns) = (first, now_ns());
    Ok(serde_json::json!({"thread": t.name, "tid": tid, "loops": loops, "cpu_ns": cpu, "overruns": overruns,
                          "started_ns": started_ns, "finished_ns": finished_ns})
        .to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("calibrate") => println!("{{\"ns_per_loop\": {:.6}}}", calibrate()),
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
            let (end, npl) = (plan.end_at_ns, plan.ns_per_loop.max(1e-3));
            let handles: Vec<_> = plan
                .threads
                .into_iter()
                .map(|t| std::thread::spawn(move || run_thread(t, start, end, npl)))
                .collect();
            let mut failed = false;
            for h in handles {
                match h.join() {
                    Ok(Ok(line)) => println!("{line}"),
                    Ok(Err(e)) => {
                        eprintln!("schedlab-worker: {e}");
                        failed = true;
                    }
                    Err(_) => failed = true,
                }
            }
            std::process::exit(if failed { 1 } else { 0 });
        }
        _ => {
            eprintln!("usage: schedlab-worker calibrate | run PLAN.json");
            std::process::exit(2);
        }
    }
}
