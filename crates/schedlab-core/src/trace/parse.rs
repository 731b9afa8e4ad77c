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
        target: usize,
        /// The record's flags show TIF_NEED_RESCHED on the CPU it was
        /// recorded on (`N`, `n`, `B` or `b` in the need-resched column;
        /// false where the format has no flags column).
        resched: bool,
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
        let i = find_key(args, from, k)?;
        pos.push((i, i + k.len() + 1));
        from = i + k.len() + 1;
    }
    let mut out = vec![];
    for (n, &(_, start)) in pos.iter().enumerate() {
        let end = pos.get(n + 1).map_or(args.len(), |p| p.0);
        out.push(args[start..end].trim().trim_end_matches("==>").trim());
    }
    Some(out)
}

/// The first position at or after `from` where `key=` starts in `args`
/// (`args[from..].find(&format!("{key}="))`, without building the pattern
/// for every line: the `=` signs are few, so each is tested for `key`
/// before it).
fn find_key(args: &str, from: usize, key: &str) -> Option<usize> {
    let bytes = args.as_bytes();
    let mut p = from;
    loop {
        p += bytes.get(p..)?.iter().position(|b| *b == b'=')?;
        if p >= from + key.len() && bytes[..p].ends_with(key.as_bytes()) {
            return Some(p - key.len());
        }
        p += 1;
    }
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

/// The tracepoints read, in the order in which a line is tested for them.
const EVENTS: [&str; 7] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup_new",
    "sched_wakeup",
    "sched_migrate_task",
    "sched_process_exit",
    "sys_exit",
];

/// The tracing system of event `e` (the `SYSTEM:` a trace may write
/// before its name).
fn system_of(e: &str) -> &'static str {
    match e {
        "sys_exit" => "raw_syscalls",
        _ => "sched",
    }
}

/// The event of a line, with the span of its ` name: ` token: the token
/// after the timestamp, written `name:` or `SYSTEM:name:` (`sched:` for
/// the scheduler's events, `raw_syscalls:` for `sys_exit`). As a search of
/// the whole line for each event in [`EVENTS`] order, each written plainly
/// first: the first event found anywhere in the line wins, at its first
/// position. One pass over the line's spaces, where building and running
/// fourteen searches per line had been most of an import's time: after a
/// space, the word (letters, digits, `_`) is an event's token iff it is
/// the event's name followed by `: `, or the system's name, `:`, the
/// event's name and `: ` (names and systems are such words).
fn find_event(line: &str) -> Option<(&'static str, (usize, usize))> {
    fn word(b: &[u8]) -> &[u8] {
        let n = b
            .iter()
            .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .unwrap_or(b.len());
        &b[..n]
    }
    let bytes = line.as_bytes();
    // The first position of each event's plain and prefixed token.
    let mut first = [[None::<usize>; 2]; EVENTS.len()];
    for (i, _) in bytes.iter().enumerate().filter(|(_, c)| **c == b' ') {
        let rest = &bytes[i + 1..];
        let w = word(rest);
        let after = &rest[w.len()..];
        let (form, name, after) = match after.first() {
            Some(b':') if after.get(1) == Some(&b' ') => (0, w, after),
            Some(b':') => {
                let name = word(&after[1..]);
                (1, name, &after[1 + name.len()..])
            }
            _ => continue,
        };
        if !after.starts_with(b": ") {
            continue;
        }
        let Some(k) = EVENTS.iter().position(|e| e.as_bytes() == name) else {
            continue;
        };
        if (form == 0 || w == system_of(EVENTS[k]).as_bytes()) && first[k][form].is_none() {
            first[k][form] = Some(i);
        }
    }
    first.iter().zip(EVENTS).find_map(|(at, e)| {
        let (form, i) = at.iter().enumerate().find_map(|(f, i)| i.map(|i| (f, i)))?;
        // `SYSTEM:` before the name in the prefixed form.
        let prefix = if form == 1 { system_of(e).len() + 1 } else { 0 };
        Some((e, (i, i + 1 + prefix + e.len() + 2)))
    })
}

/// Parse one line; Ok(None) for lines that are not scheduler tracepoints.
pub(super) fn parse_line(line: &str, no: usize) -> Result<Option<Raw>, String> {
    if line.trim_start().starts_with('#') || line.trim().is_empty() {
        return Ok(None);
    }
    let Some((name, at)) = find_event(line) else {
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
    let resched = need_resched(&head[rb + 1..]);
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
                    target,
                    resched,
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

/// Whether the flags column before the timestamp (tracefs: `dNh3.`, the
/// second character the need-resched state, trace_output.c
/// `trace_print_lat_fmt` v6.18) shows TIF_NEED_RESCHED: `N` (with
/// PREEMPT_NEED_RESCHED), `n`, `B` and `b` (with the lazy bit too); `L`,
/// `l` and `p` are the lazy or preempt-count bits alone. False without a
/// flags column (perf script, trace-cmd's default report).
fn need_resched(after_cpu: &str) -> bool {
    let mut toks = after_cpu.split_whitespace().rev();
    toks.next(); // the timestamp
    let Some(flags) = toks.next().map(str::as_bytes) else {
        return false;
    };
    let looks_like_flags = (4..=6).contains(&flags.len())
        && flags
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'.');
    looks_like_flags && matches!(flags[1], b'N' | b'n' | b'B' | b'b')
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn need_resched_is_read_from_the_flags_column() {
        let w = |f: &str| {
            format!("  x-7 [001] {f} 2.5: sched_wakeup: comm=x pid=3 prio=120 target_cpu=001")
        };
        for (flags, want) in [
            ("dNh3.", true),
            ("dnh2.", true),
            ("dBh2.", true),
            ("dLh2.", false),
            ("d.h2.", false),
        ] {
            match parse_line(&w(flags), 1).expect("ok").expect("event").ev {
                RawEv::Wakeup {
                    resched, target, ..
                } => assert_eq!((resched, target), (want, 1), "{flags}"),
                _ => panic!("wakeup expected"),
            }
        }
        // No flags column (perf script, trace-cmd's default report): false.
        let p = "  x 7/7 [001] 2.5: sched:sched_wakeup: comm=x pid=3 prio=120 target_cpu=001";
        assert!(matches!(
            parse_line(p, 1).expect("ok").expect("event").ev,
            RawEv::Wakeup { resched: false, .. }
        ));
    }

    /// The searches `find_event` stands for: each event in order, plain
    /// then prefixed, anywhere in the line.
    fn find_event_by_search(line: &str) -> Option<(&'static str, (usize, usize))> {
        EVENTS.iter().find_map(|e| {
            let system = if *e == "sys_exit" {
                "raw_syscalls:"
            } else {
                "sched:"
            };
            [format!(" {e}: "), format!(" {system}{e}: ")]
                .iter()
                .find_map(|p| line.find(p.as_str()).map(|i| (*e, (i, i + p.len()))))
        })
    }

    #[test]
    fn find_event_is_the_ordered_search() {
        let lines = [
            "  bash-1 [000] d..2. 1.000001: sched_switch: prev_comm=bash prev_pid=1",
            "  bash-1 [000] d..2. 1.000001: sched:sched_switch: prev_comm=bash",
            "  a-2 (2) [001] 2.5: sched_wakeup_new: comm=a pid=3 prio=120 target_cpu=001",
            "  a-2 [001] 2.5: sched_wakeup: comm=sched_waking: pid=3 prio=120 target_cpu=001",
            "  sched_switch: -7 [001] 2.5: sched_waking: comm=x pid=3 prio=120 target_cpu=001",
            "  x 7/7 [001] 2.5: raw_syscalls:sys_exit: NR 0 = 0",
            "  x-7 [001] 2.5: sys_exit: NR 0 = 0 sched_migrate_task: ",
            "  x-7 [001] 2.5: sched_process_exit: comm=x pid=7 prio=120 group_dead=1",
            "  x-7 [001] 2.5: sched_migrate_task: comm=x pid=7 prio=120 orig_cpu=0 dest_cpu=1",
            "  x-7 [001] 2.5: sched_stat_runtime: comm=x pid=7 runtime=1",
            "  x-7 [001] 2.5: sched:sched_wakeup sched:sched_wakeup:  sched_wakeup:x",
            "  ünï-7 [001] 2.5: sched_switch:  sched:sched_waking: r s",
            " sched_switch: ",
            "sched_switch: at the start, no space before it",
            "  x-7 [001] 2.5: raw_syscalls:sched_switch: sched:sys_exit: sched:: sched_waking:",
            "  x-7 [001] 2.5: sched_switch:x sched_switch:: sched_switch_: sched_switch:",
            "",
        ];
        for line in lines {
            assert_eq!(find_event(line), find_event_by_search(line), "{line:?}");
        }
        // Lines pieced together from fragments of tokens.
        let pieces = [
            " ",
            ":",
            ": ",
            "sched",
            "sched:",
            "raw_syscalls",
            "raw_syscalls:",
            "sys_exit",
            "sched_switch",
            "sched_wakeup",
            "_new",
            "sched_waking",
            "sched_migrate_task",
            "sched_process_exit",
            "x",
            "_",
            "é",
            "=",
        ];
        let mut rng = crate::rng::Rng::new(3);
        for _ in 0..20_000 {
            let n = 1 + rng.next_u64() % 12;
            let line: String = (0..n)
                .map(|_| pieces[(rng.next_u64() % pieces.len() as u64) as usize])
                .collect();
            assert_eq!(find_event(&line), find_event_by_search(&line), "{line:?}");
        }
    }

    #[test]
    fn find_key_is_the_search_for_key_and_equals_sign() {
        let args = "comm=a=b pid=3 prio= pid=4 xpid=5 target_cpu=001 ==> next_pid=9";
        for key in [
            "comm",
            "pid",
            "prio",
            "target_cpu",
            "next_pid",
            "b",
            "x",
            "=",
            "a=b",
        ] {
            for from in 0..=args.len() {
                let want = args[from..].find(&format!("{key}=")).map(|i| i + from);
                assert_eq!(find_key(args, from, key), want, "{key} from {from}");
            }
        }
    }
}
