//! Scheduling attributes of one worker thread, applied in the order
//! ../shared/host.md §4 recommends: cgroup, affinity, `sched_setattr`
//! (policy, nice, RT priority, DEADLINE parameters, fair slice), timer
//! slack (left to the kernel). Each step reports a one-line error naming the thread and call.

use crate::ThreadPlan;

/// `struct sched_attr` (include/uapi/linux/sched/types.h), SCHED_ATTR_SIZE_VER1.
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

const SCHED_DEADLINE: u32 = 6;

fn os_err(thread: &str, call: &str) -> String {
    format!("{thread}: {call}: {}", std::io::Error::last_os_error())
}

/// `SCHED_EXT` (include/uapi/linux/sched.h, 6.12).
const SCHED_EXT: u32 = 7;

fn tid() -> i64 {
    // SAFETY: gettid has no arguments.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// The kernel policy number of a plan's policy name.
fn policy(t: &ThreadPlan) -> Result<u32, String> {
    Ok(match t.policy.as_str() {
        "SCHED_OTHER" => libc::SCHED_OTHER,
        "SCHED_BATCH" => libc::SCHED_BATCH,
        "SCHED_IDLE" => libc::SCHED_IDLE,
        "SCHED_FIFO" => libc::SCHED_FIFO,
        "SCHED_RR" => libc::SCHED_RR,
        "SCHED_DEADLINE" => return Ok(SCHED_DEADLINE),
        // Scheduled by the loaded sched_ext scheduler (kernels with SCHED_CLASS_EXT).
        "SCHED_EXT" => return Ok(SCHED_EXT),
        p => {
            return Err(format!(
                "{}: policy {p} is not supported by the worker",
                t.name
            ))
        }
    } as u32)
}

/// Name the thread, join its cgroup, pin it and set its policy. The timer
/// slack stays the kernel's (50 µs for SCHED_OTHER, 0 for RT/DEADLINE), as
/// under rt-app: the simulator models it (engine/latency.rs,
/// `timer_slack_ns`); it used to be set to 1 ns here when it did not.
pub fn apply(t: &ThreadPlan) -> Result<(), String> {
    let name: Vec<u8> = t.name.bytes().take(15).chain(std::iter::once(0)).collect();
    // SAFETY: prctl with a NUL-terminated buffer of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0) };
    for file in &t.cgroup_files {
        // Joining first means the RT / DL admission below is checked
        // against the group's own budget.
        std::fs::write(file, tid().to_string())
            .map_err(|e| format!("{}: joining cgroup ({file}): {e}", t.name))?;
    }
    if let Some(cpus) = &t.cpus {
        if let Some(c) = cpus.iter().find(|c| **c >= libc::CPU_SETSIZE as usize) {
            return Err(format!("{}: CPU {c} is beyond CPU_SETSIZE", t.name));
        }
        // SAFETY: a zeroed cpu_set_t filled with CPU_SET, passed by pointer with its size.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            return Err(os_err(&t.name, "sched_setaffinity"));
        }
    }
    let p = policy(t)?;
    let mut attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: p,
        ..SchedAttr::default()
    };
    match p {
        SCHED_DEADLINE => {
            attr.sched_runtime = t.dl_runtime_ns;
            attr.sched_deadline = t.dl_deadline_ns;
            attr.sched_period = t.dl_period_ns;
        }
        x if x == libc::SCHED_FIFO as u32 || x == libc::SCHED_RR as u32 => {
            attr.sched_priority = t.rt_priority as u32;
        }
        _ => {
            attr.sched_nice = t.nice;
            // A fair task's custom slice (EEVDF, 6.6+): sched_runtime of a
            // SCHED_OTHER attr; the kernel clamps it to [0.1, 100] ms.
            attr.sched_runtime = t.slice_ns;
        }
    }
    // SAFETY: sched_setattr(0 = this thread, a fully initialised
    // sched_attr whose size field is its size, flags 0).
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0) };
    if rc != 0 {
        return Err(os_err(&t.name, &format!("sched_setattr({})", t.policy)));
    }
    Ok(())
}
