//! The rt-app-like program of one worker thread and the clocks it uses.

use crate::counters::Counters;
use crate::event::Event;
use crate::sync::Shared;
use crate::ThreadPlan;
use std::hint::black_box;
use std::sync::atomic::Ordering::SeqCst;

pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
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
pub fn calibrate() -> f64 {
    let n = 20_000_000u64;
    (0..7)
        .map(|_| {
            let t = cpu_ns();
            spin(n);
            (cpu_ns() - t) as f64 / n as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// How `run` work is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Work {
    /// Busy-loop iterations from the calibration (rt-app's way): the
    /// amount of work is fixed, its duration follows the CPU's speed.
    Loops,
    /// Time on the CPU (the simulator's meaning of `run` at capacity 1024
    /// and full frequency), steady on machines whose speed drifts, such as
    /// shared VMs where one calibration can be off by 2× a minute later.
    /// Measured with the vDSO monotonic clock around ~20 µs chunks of
    /// spinning: a chunk that took over 0.5 ms was preempted, and is
    /// credited with a usual chunk's time. The thread CPU clock is
    /// not used: reading it calls the class's update_curr(), which under
    /// EEVDF reschedules as soon as the slice is used up, turning every
    /// read into a preemption point finer than the tick (found on 6.18:
    /// 1,480 switches/s instead of ~250/s for two pinned hogs).
    Oncpu,
}

/// Spinning chunk of about 20 µs, for `Oncpu` work.
const CHUNK_NS: f64 = 20_000.0;
/// Spinning step of about 1 µs for the last chunk of `Oncpu` work.
const STEP_NS: f64 = 1_000.0;
/// A chunk longer than this was preempted.
const PREEMPTED_NS: u64 = 500_000;

/// Busy work of `ns` (in the plan's unit), stopping at `end`; returns the
/// time on CPU it is credited with (nominal for `Loops`).
fn busy(ns: u64, work: Work, ns_per_loop: f64, end: u64) -> u64 {
    match work {
        Work::Loops => {
            // In chunks of about 1 ms, so that the end time is kept.
            let total = (ns as f64 / ns_per_loop) as u64;
            let chunk = ((1_000_000.0 / ns_per_loop) as u64).max(1);
            let mut left = total;
            while left > 0 && now_ns() < end {
                let n = left.min(chunk);
                spin(n);
                left -= n;
            }
            ((total - left) as f64 * ns_per_loop) as u64
        }
        Work::Oncpu => {
            let chunk = ((CHUNK_NS / ns_per_loop) as u64).max(1);
            let step = ((STEP_NS / ns_per_loop) as u64).max(1);
            // The mean uninterrupted chunk (exponential average).
            let mut usual = CHUNK_NS;
            let (mut done, mut t) = (0u64, now_ns());
            while done < ns && t < end {
                // The last 40 µs in steps of about 1 µs (a 2 µs run must
                // not spin 20 µs): one chunk sized from the calibration for
                // the rest overshot when the vCPU ran slower than it did at
                // calibration. On the 2-vCPU VM (three alternating host runs
                // each of a 50 µs / 5 ms sleeper, alone and beside hogs) a
                // run was credited 58.6 / 56.7 µs on average before, 56.0 /
                // 54.9 after: the rest is the machine's (interrupts, steal
                // and cold caches inside the spinning, all on the thread's
                // CPU time as well).
                let left = (((ns - done) as f64 / ns_per_loop) as u64).max(1);
                spin(if ns - done > 2 * CHUNK_NS as u64 {
                    chunk
                } else {
                    step.min(left)
                });
                let t2 = now_ns();
                let took = t2 - t;
                // Chunks vary 12-140 µs uninterrupted on the shared VM this
                // was built on (the vCPU's speed changes); a preemption by
                // another task of the run lasts at least a tick or a
                // task's whole burst. Longer than PREEMPTED: credited with
                // one usual chunk of work. Shorter preemptions (a wakeup
                // and a few µs of another task) count as ours: at 200/s,
                // 0.3 % of a hog's time.
                if took > PREEMPTED_NS {
                    done += usual as u64;
                } else {
                    usual = 0.95 * usual + 0.05 * took as f64;
                    done += took;
                }
                t = t2;
            }
            done
        }
    }
}

/// Sleep until `target` (capped at `end`) and record how late the thread
/// runs again: timer slack, the wakeup path and the switch, as the thread
/// itself sees them, with no tracing (`schedlab calibrate`).
fn sleep_measured(target: u64, end: u64, late: &mut Vec<u64>) {
    sleep_until(target.min(end));
    if target < end && late.len() < MAX_LATENESS_SAMPLES {
        late.push(now_ns().saturating_sub(target));
    }
}

/// Lateness samples kept per thread (a bound on memory, not on the run).
const MAX_LATENESS_SAMPLES: usize = 1 << 20;

/// count, p50, p90, p99 and max of `samples` (ns).
fn lateness_summary(mut samples: Vec<u64>) -> serde_json::Value {
    samples.sort_unstable();
    let q = |p: f64| -> Option<u64> {
        let n = samples.len();
        (n > 0).then(|| samples[((p * n as f64).ceil() as usize).clamp(1, n) - 1])
    };
    serde_json::json!({
        "count": samples.len(), "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": samples.last(),
    })
}

/// Run one thread's program from `start` (plus its delay) to its loop
/// count or `end`; returns the JSON line of its end report.
pub fn run_thread(
    t: ThreadPlan,
    run: &crate::RunParams,
    shared: Option<&Shared>,
) -> Result<String, String> {
    crate::attrs::apply(&t)?;
    let events = t
        .events
        .iter()
        .map(Event::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", t.name))?;
    let slots = shared.map_or(0, Shared::slots);
    if let Some(s) = events
        .iter()
        .filter_map(Event::max_slot)
        .find(|s| *s >= slots)
    {
        return Err(format!(
            "{}: sync slot {s} beyond the plan's {slots} sync_slots",
            t.name
        ));
    }
    let sync = |ev: &Event| -> Result<&Shared, String> {
        shared.ok_or(format!("{}: {ev:?} needs the plan's sync_file", t.name))
    };
    // SAFETY: gettid has no arguments.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    println!("{}", serde_json::json!({"thread": t.name, "tid": tid}));
    let end = run.end;
    // The thread's reference time: the common start plus its delay, when it
    // was released, not when it first got a CPU (the simulator's rule,
    // engine/exec.rs `step`, docs/model.md "Timer reference"). Counting a
    // timer's first period from the first run instead put every periodic
    // thread's grid 0.1-0.4 ms after the simulator's on the 2-vCPU VM (its
    // release latency), which decides whether a 2 ms run of a 10 ms timer
    // crosses a tick before or after its slice is used up (fidelity's
    // `tick-wait`: 151 against 7 preemptions in one replay).
    let release = run.start + t.delay_ns;
    sleep_until(release);
    let before = Counters::read();
    let (first, cpu0) = (now_ns(), cpu_ns());
    let mut own_timer: Option<u64> = None;
    let (mut loops, mut overruns, mut busy_cpu) = (0u64, 0u64, 0u64);
    let mut lateness: Vec<u64> = vec![];
    'outer: while t.loops.is_none_or(|n| loops < n) {
        for ev in &events {
            if now_ns() >= end {
                break 'outer;
            }
            match ev {
                Event::Run(v) => busy_cpu += busy(*v, run.work, run.ns_per_loop, end),
                Event::Runtime(v) => {
                    let until = (now_ns() + v).min(end);
                    while now_ns() < until {
                        spin(1000);
                    }
                }
                Event::Sleep(v) => sleep_measured(now_ns() + v, end, &mut lateness),
                Event::Timer {
                    period,
                    relative,
                    slot,
                } => {
                    // As the simulator's timer (engine/exec.rs): the next
                    // release is one period after the previous one (the
                    // thread's release for the first); a relative timer
                    // that overran restarts its grid from now.
                    let prev = match slot {
                        Some(s) => Some(sync(ev)?.timer(*s).load(SeqCst)).filter(|x| *x > 0),
                        None => own_timer,
                    };
                    let mut next = prev.unwrap_or(release) + period;
                    let now = now_ns();
                    let late = now >= next;
                    if late {
                        overruns += 1;
                        if *relative {
                            next = now;
                        }
                    }
                    match slot {
                        Some(s) => sync(ev)?.timer(*s).store(next, SeqCst),
                        None => own_timer = Some(next),
                    }
                    if !late {
                        sleep_measured(next, end, &mut lateness);
                    }
                }
                // SAFETY: sched_yield has no arguments.
                Event::Yield => unsafe {
                    libc::sched_yield();
                },
                Event::Lock(m) => {
                    if !sync(ev)?.lock(*m, end) {
                        break 'outer;
                    }
                }
                Event::Unlock(m) => sync(ev)?.unlock(*m),
                Event::Wait { cond, mutex } => {
                    if !sync(ev)?.cond_wait(*cond, *mutex, end) {
                        break 'outer;
                    }
                }
                Event::Signal(c) => sync(ev)?.cond_wake(*c, false),
                Event::Broad(c) => sync(ev)?.cond_wake(*c, true),
                Event::Barrier { slot, parties } => sync(ev)?.barrier(*slot, *parties, end),
                Event::Suspend(s) => sync(ev)?.suspend(*s, end),
                Event::Resume(s) => sync(ev)?.resume(*s),
            }
        }
        loops += 1;
    }
    let (cpu, finished_ns) = (cpu_ns(), now_ns());
    let proc_counters = Counters::read().since(before);
    Ok(serde_json::json!({
        "thread": t.name, "tid": tid, "loops": loops, "cpu_ns": cpu, "overruns": overruns,
        "started_ns": first, "finished_ns": finished_ns,
        // Where its timers' grid starts (the release): reports without it
        // come from workers that counted from `started_ns` (fidelity.py
        // replays those with the difference as a delay).
        "timer_base_ns": release,
        // CPU time of the program beyond its `run` work: the worker's own
        // overhead (sleep / timer / yield / futex calls, clock reads; with
        // `runtime` events, their busy time too).
        "busy_cpu_ns": busy_cpu, "overhead_cpu_ns": (cpu - cpu0).saturating_sub(busy_cpu),
        "proc": proc_counters,
        // How late the thread ran after each of its sleeps and timers.
        "sleep_lateness_ns": lateness_summary(lateness),
    })
    .to_string())
}
