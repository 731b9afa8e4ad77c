//! Parsing one line of a recorded scheduler trace (tracefs, trace-cmd
//! report, perf script) into a tracepoint (import.rs: the formats it
//! accepts, and what it does with them).

use crate::clock::Ns;

/// A parsed tracepoint.
#[derive(Debug, Clone)]
pub(super) struct Raw {
    pub(super) line: usize,
    pub(super) ts: Ns,
    pub(super) cpu: usize,
    /// TGID column of the line's current task, if recorded.
    pub(super) tgid: Option<(u32, u32)>,
    pub(super) ev: RawEv,
}

#[derive(Debug, Clone)]
pub(super) enum RawEv {
    Switch {
        prev: (u32, String, i32),
        prev_state: String,
        next: (u32, String, i32),
    },
    Waking {
        task: (u32, String, i32),
        target: usize,
    },
    Wakeup {
        task: (u32, String, i32),
        new: bool,
    },
    Migrate {
        task: (u32, String, i32),
        orig: usize,
        dest: usize,
    },
    Exit {
        task: (u32, String, i32),
    },
    /// A syscall's return (`raw_syscalls:sys_exit`), recorded in the
    /// returning task's own context: proof that the task in the record's
    /// `COMM-PID` column runs on that CPU. The host runner records the
    /// returns of the workers' blocking calls because some kernels lose the
    /// idle task's own records, its switches to woken tasks among them
    /// (docs/model.md, "Missing records").
    Context,
}

/// Values of `keys` in `args`, in order; a value runs to the next key.
fn fields<'a>(args: &'a str, keys: &[&str]) -> Option<Vec<&'a str>> {
    let mut pos = vec![];
    let mut from = 0;
    for k in keys {
        let pat = format!("{k}=");
        let i = args[from..].find(&pat)? + from;
        pos.push((i, i + pat.len()));
        from = i + pat.len();
    }
    let mut out = vec![];
    for (n, &(_, start)) in pos.iter().enumerate() {
        let end = pos.get(n + 1).map_or(args.len(), |p| p.0);
        out.push(args[start..end].trim().trim_end_matches("==>").trim());
    }
    Some(out)
}

pub(super) fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.trim().parse().ok()
}

/// Highest CPU count a trace may name (the kernel's largest `NR_CPUS`):
/// CPU numbers index per-CPU state, so a corrupt `[4294967295]` column is
/// refused instead of allocating for it.
pub const MAX_TRACE_CPUS: usize = 8192;

/// A CPU number from a trace: `what` names the column or field in errors.
fn cpu_num(s: &str, what: &str) -> Result<usize, String> {
    match num::<usize>(s) {
        Some(c) if c < MAX_TRACE_CPUS => Ok(c),
        Some(c) => Err(format!(
            "{what} {c} out of range (expected 0..={})",
            MAX_TRACE_CPUS - 1
        )),
        None => Err(format!("bad {what} \"{}\"", s.trim())),
    }
}

/// Parse one line; Ok(None) for lines that are not scheduler tracepoints.
pub(super) fn parse_line(line: &str, no: usize) -> Result<Option<Raw>, String> {
    if line.trim_start().starts_with('#') || line.trim().is_empty() {
        return Ok(None);
    }
    const EVENTS: [&str; 6] = [
        "sched_switch",
        "sched_waking",
        "sched_wakeup_new",
        "sched_wakeup",
        "sched_migrate_task",
        "sched_process_exit",
    ];
    // The event name is the token after the timestamp, as `name:` or `sched:name:`.
    let found = EVENTS.iter().find_map(|e| {
        [format!(" {e}: "), format!(" sched:{e}: ")]
            .iter()
            .find_map(|p| line.find(p.as_str()).map(|i| (*e, (i, i + p.len()))))
    });
    let found = found.or_else(|| {
        [" sys_exit: ", " raw_syscalls:sys_exit: "]
            .iter()
            .find_map(|p| line.find(p).map(|i| ("sys_exit", (i, i + p.len()))))
    });
    let Some((name, at)) = found else {
        return Ok(None);
    };
    let head = &line[..at.0];
    let args = &line[at.1..];
    let lb = head.rfind('[').ok_or("no [CPU] column")?;
    let rb = head[lb..].find(']').ok_or("no [CPU] column")? + lb;
    let cpu = cpu_num(&head[lb + 1..rb], "CPU number")?;
    let ts_tok = head[rb + 1..]
        .split_whitespace()
        .last()
        .ok_or("no timestamp")?
        .trim_end_matches(':');
    let ts = parse_ts(ts_tok).ok_or_else(|| {
        format!("bad timestamp \"{ts_tok}\" (expected SECS.FRACTION, at most {MAX_TRACE_SECS} s)")
    })?;
    // Optional `(TGID)` column after `COMM-PID`.
    let left = &head[..lb];
    let tgid = match (left.rfind('('), left.rfind(')')) {
        (Some(a), Some(b)) if b > a => {
            let pid = left[..a]
                .trim_end()
                .rsplit(['-', ' '])
                .next()
                .and_then(num::<u32>);
            num::<u32>(&left[a + 1..b]).and_then(|g| pid.map(|p| (p, g)))
        }
        // perf script's `COMM PID/TID` column.
        _ => left
            .split_whitespace()
            .last()
            .and_then(|tok| tok.split_once('/'))
            .and_then(|(g, p)| Some((num::<u32>(p)?, num::<u32>(g)?))),
    };
    let task = |v: &[&str]| -> Result<(u32, String, i32), String> {
        Ok((
            num(v[1]).ok_or("bad pid")?,
            v[0].to_string(),
            num(v[2]).ok_or("bad prio")?,
        ))
    };
    let bad = || format!("{name}: fields not understood: \"{}\"", args.trim());
    let ev = match name {
        "sys_exit" => RawEv::Context,
        "sched_switch" => {
            let keys = [
                "prev_comm",
                "prev_pid",
                "prev_prio",
                "prev_state",
                "next_comm",
                "next_pid",
                "next_prio",
            ];
            match fields(args, &keys) {
                Some(v) => RawEv::Switch {
                    prev: task(&v[0..3])?,
                    prev_state: v[3].to_string(),
                    next: task(&v[4..7])?,
                },
                None => compact_switch(args).ok_or_else(bad)?,
            }
        }
        "sched_migrate_task" => {
            let v =
                fields(args, &["comm", "pid", "prio", "orig_cpu", "dest_cpu"]).ok_or_else(bad)?;
            RawEv::Migrate {
                task: task(&v)?,
                orig: cpu_num(v[3], "orig_cpu")?,
                dest: cpu_num(v[4], "dest_cpu")?,
            }
        }
        "sched_process_exit" => {
            let v = fields(args, &["comm", "pid", "prio"]).ok_or_else(bad)?;
            let v: Vec<&str> = v
                .iter()
                .map(|x| x.split_whitespace().next().unwrap_or(""))
                .collect();
            RawEv::Exit { task: task(&v)? }
        }
        _ => {
            let (t, target) = match fields(args, &["comm", "pid", "prio", "target_cpu"]) {
                Some(v) => (task(&v)?, cpu_num(v[3], "target_cpu")?),
                None => compact_wakeup(args).ok_or_else(bad)?,
            };
            match name {
                "sched_waking" => RawEv::Waking { task: t, target },
                _ => RawEv::Wakeup {
                    task: t,
                    new: name == "sched_wakeup_new",
                },
            }
        }
    };
    Ok(Some(Raw {
        line: no,
        ts,
        cpu,
        tgid,
        ev,
    }))
}

/// `COMM:PID [PRIO]`, the task notation of `trace-cmd report`'s own sched
/// plugin (the comm may hold `:` itself: the pid follows the last one).
fn compact_task(s: &str) -> Option<(u32, String, i32)> {
    let (comm_pid, prio) = s.trim().rsplit_once(' ')?;
    let (comm, pid) = comm_pid.trim().rsplit_once(':')?;
    let prio = prio.trim().strip_prefix('[')?.strip_suffix(']')?;
    Some((num(pid)?, comm.to_string(), num(prio)?))
}

/// trace-cmd report's default sched_switch:
/// `prev_comm:prev_pid [prev_prio] STATE ==> next_comm:next_pid [next_prio]`.
fn compact_switch(args: &str) -> Option<RawEv> {
    let (prev, next) = args.split_once(" ==> ")?;
    let (prev_task, state) = prev.trim().rsplit_once(' ')?;
    Some(RawEv::Switch {
        prev: compact_task(prev_task)?,
        prev_state: state.to_string(),
        next: compact_task(next)?,
    })
}

/// trace-cmd report's default sched_wakeup: `comm:pid [prio] [success=1] CPU:NNN`.
fn compact_wakeup(args: &str) -> Option<((u32, String, i32), usize)> {
    let (rest, cpu) = args.trim().rsplit_once(" CPU:")?;
    let rest = rest.trim().trim_end_matches("success=1").trim_end();
    let target = cpu_num(cpu, "CPU").ok()?;
    Some((compact_task(rest)?, target))
}

/// Largest timestamp a trace may carry, in seconds: `u64` ns since boot.
pub const MAX_TRACE_SECS: u64 = u64::MAX / 1_000_000_000 - 1;

/// `SECS.FRACTION` (µs or ns digits) to ns; `None` if malformed or past
/// [`MAX_TRACE_SECS`].
fn parse_ts(s: &str) -> Option<Ns> {
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    let sec: Ns = sec.parse().ok().filter(|s| *s <= MAX_TRACE_SECS)?;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ns: Ns = if frac.is_empty() {
        0
    } else {
        frac.parse::<Ns>().ok()? * 10u64.pow(9 - frac.len() as u32)
    };
    sec.checked_mul(1_000_000_000)?.checked_add(ns)
}
