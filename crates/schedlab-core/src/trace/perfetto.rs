//! Perfetto native protobuf export (`.pftrace`), ../shared/formats.md §2.5.
//!
//! Hand-rolled encoding of the ten messages we need (no protoc, no
//! generated code): one `ProcessTree` packet, then per-CPU
//! `FtraceEventBundle` packets of at most [`BUNDLE_EVENTS`] events, each
//! sorted by timestamp. Field numbers were checked against the generated
//! classes of the `perfetto` PyPI package (0.59.1), and a pytest decodes our
//! output with them.

use super::{PrevState, TraceData, TraceEvent};

/// Events per `FtraceEventBundle` packet.
pub const BUNDLE_EVENTS: usize = 4096;
const SEQ_ID: u64 = 1;

/// Minimal protobuf writer.
#[derive(Default)]
struct Pb(Vec<u8>);

impl Pb {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn key(&mut self, field: u32, wire: u8) {
        self.varint(((field as u64) << 3) | wire as u64);
    }
    fn uint(&mut self, field: u32, v: u64) {
        self.key(field, 0);
        self.varint(v);
    }
    /// int32/int64 fields: negative numbers are sign-extended to 64 bits.
    fn int(&mut self, field: u32, v: i64) {
        self.key(field, 0);
        self.varint(v as u64);
    }
    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn msg(&mut self, field: u32, m: Pb) {
        self.bytes(field, &m.0);
    }
}

/// `prev_state` as the kernel records it (`__trace_sched_switch_state`,
/// include/trace/events/sched.h, 6.x): a preempted task is
/// `TASK_REPORT_MAX` (0x100, which Perfetto shows as "Runnable
/// (Preempted)" for kernels from 4.14, the version the SystemInfo packet
/// gives); the idle task, which leaves from schedule_idle(), is plain
/// running (0).
fn state_bits(s: PrevState, idle: bool) -> i64 {
    match s {
        PrevState::Runnable if idle => 0,
        PrevState::Runnable => 0x100,
        PrevState::Sleeping => 1,
        PrevState::Dead => 0x10,
    }
}

/// The kernel version the SystemInfo packet names: the release whose
/// `prev_state` layout the export follows (see `state_bits`).
const UTS_RELEASE: &str = "6.12.0-schedlab";

/// `ClockSnapshot.Clock.clock_id` values (perfetto builtin_clock.proto).
const CLOCK_MONOTONIC: u64 = 3;
const CLOCK_BOOTTIME: u64 = 6;

fn wake_msg(comm: &str, pid: u32, prio: i32, target_cpu: usize) -> Pb {
    let mut m = Pb::default();
    m.bytes(1, comm.as_bytes());
    m.int(2, pid as i64);
    m.int(3, prio as i64);
    m.int(4, 1);
    m.int(5, target_cpu as i64);
    m
}

fn event_msg(d: &TraceData, ts: u64, cpu: usize, ev: &TraceEvent, curr_pid: u32) -> Pb {
    let mut e = Pb::default();
    e.uint(1, ts);
    e.uint(2, curr_pid as u64);
    match *ev {
        TraceEvent::Switch {
            prev,
            prev_state,
            next,
        } => {
            let (pc, pp, ppr) = d.ident(prev, cpu);
            let (nc, np, npr) = d.ident(next, cpu);
            let mut m = Pb::default();
            m.bytes(1, pc.as_bytes());
            m.int(2, pp as i64);
            m.int(3, ppr as i64);
            m.int(4, state_bits(prev_state, prev.is_none()));
            m.bytes(5, nc.as_bytes());
            m.int(6, np as i64);
            m.int(7, npr as i64);
            e.msg(4, m);
        }
        TraceEvent::Waking { task, target_cpu } => {
            let (c, p, pr) = d.ident(Some(task), cpu);
            e.msg(20, wake_msg(&c, p, pr, target_cpu));
        }
        TraceEvent::Wakeup { task } => {
            let (c, p, pr) = d.ident(Some(task), cpu);
            e.msg(17, wake_msg(&c, p, pr, cpu));
        }
        TraceEvent::WakeupNew { task } => {
            let (c, p, pr) = d.ident(Some(task), cpu);
            e.msg(114, wake_msg(&c, p, pr, cpu));
        }
        TraceEvent::Migrate {
            task,
            orig_cpu,
            dest_cpu,
        } => {
            let (c, p, pr) = d.ident(Some(task), cpu);
            let mut m = Pb::default();
            m.bytes(1, c.as_bytes());
            m.int(2, p as i64);
            m.int(3, pr as i64);
            m.int(4, orig_cpu as i64);
            m.int(5, dest_cpu as i64);
            e.msg(491, m);
        }
        TraceEvent::Exit { task } => {
            let (c, p, pr) = d.ident(Some(task), cpu);
            let mut m = Pb::default();
            m.bytes(1, c.as_bytes());
            m.int(2, p as i64);
            m.int(3, d.tasks[task].tgid as i64);
            m.int(4, pr as i64);
            e.msg(238, m);
        }
        // A CPU's frequency is the kernel's power:cpu_frequency (state in
        // kHz), which Perfetto draws as the CPU's frequency track; task
        // counters are track events (`counter_packets`), never here.
        TraceEvent::Counter { value, .. } => {
            let mut m = Pb::default();
            m.uint(1, value.max(0) as u64);
            m.uint(2, cpu as u64);
            e.msg(11, m);
        }
    }
    e
}

fn packet(out: &mut Pb, body: impl FnOnce(&mut Pb)) {
    let mut p = Pb::default();
    body(&mut p);
    p.uint(10, SEQ_ID);
    out.msg(1, p);
}

/// Task counters (vruntime, deadline, lag, ... at each switch) as Perfetto
/// counter tracks: one thread track per task, under it one counter track per
/// value, then a `TrackEvent` of type COUNTER per sample. Track uuids are
/// numbered in order of first appearance, so the bytes are deterministic.
fn counter_packets(out: &mut Pb, d: &TraceData) {
    const TRACK_EVENT_COUNTER: u64 = 4;
    let mut thread_uuid: Vec<Option<u64>> = vec![None; d.tasks.len()];
    let mut tracks: std::collections::BTreeMap<(usize, &'static str), u64> = Default::default();
    let mut next_uuid = 1u64;
    for r in &d.records {
        let TraceEvent::Counter {
            task: Some(t),
            name,
            value,
        } = r.ev
        else {
            continue;
        };
        let parent = match thread_uuid[t] {
            Some(u) => u,
            None => {
                let u = next_uuid;
                next_uuid += 1;
                thread_uuid[t] = Some(u);
                packet(out, |p| {
                    p.uint(8, r.ts);
                    let mut th = Pb::default();
                    th.int(1, d.tasks[t].tgid as i64);
                    th.int(2, d.tasks[t].pid as i64);
                    th.bytes(5, d.tasks[t].comm.as_bytes());
                    let mut td = Pb::default();
                    td.uint(1, u);
                    td.msg(4, th);
                    p.msg(60, td);
                });
                u
            }
        };
        let uuid = match tracks.get(&(t, name)) {
            Some(u) => *u,
            None => {
                let u = 1_000_000 + tracks.len() as u64;
                tracks.insert((t, name), u);
                packet(out, |p| {
                    p.uint(8, r.ts);
                    let mut td = Pb::default();
                    td.uint(1, u);
                    td.uint(5, parent);
                    td.bytes(2, name.as_bytes());
                    td.msg(8, Pb::default());
                    p.msg(60, td);
                });
                u
            }
        };
        packet(out, |p| {
            p.uint(8, r.ts);
            let mut te = Pb::default();
            te.uint(9, TRACK_EVENT_COUNTER);
            te.uint(11, uuid);
            te.int(30, value);
            p.msg(11, te);
        });
    }
}

/// Encode a whole trace as a Perfetto `Trace` message.
pub fn encode(d: &TraceData) -> Vec<u8> {
    let mut out = Pb::default();
    // The simulated clock is both BOOTTIME (ftrace's clock here) and
    // MONOTONIC, from 0: a snapshot at 0 tells Perfetto so.
    packet(&mut out, |p| {
        p.uint(8, 0);
        p.uint(13, 1); // SEQ_INCREMENTAL_STATE_CLEARED: the sequence starts here
        let mut snap = Pb::default();
        for id in [CLOCK_BOOTTIME, CLOCK_MONOTONIC] {
            let mut c = Pb::default();
            c.uint(1, id);
            c.uint(2, 0);
            snap.msg(1, c);
        }
        snap.uint(2, CLOCK_BOOTTIME);
        p.msg(6, snap);
    });
    // SystemInfo: the kernel whose trace layout this follows, and the CPUs.
    packet(&mut out, |p| {
        p.uint(8, 0);
        let mut uts = Pb::default();
        uts.bytes(1, b"Linux");
        uts.bytes(2, b"schedlab simulation");
        uts.bytes(3, UTS_RELEASE.as_bytes());
        uts.bytes(4, b"x86_64");
        let mut si = Pb::default();
        si.msg(1, uts);
        si.uint(8, d.nr_cpus as u64);
        p.msg(45, si);
    });
    packet(&mut out, |p| {
        p.uint(8, 0);
        let mut tree = Pb::default();
        for (tgid, name) in &d.processes {
            let mut pr = Pb::default();
            pr.int(1, *tgid as i64);
            pr.int(2, 1);
            pr.bytes(3, name.as_bytes());
            tree.msg(1, pr);
        }
        for t in &d.tasks {
            let mut th = Pb::default();
            th.int(1, t.pid as i64);
            th.bytes(2, t.comm.as_bytes());
            th.int(3, t.tgid as i64);
            tree.msg(2, th);
        }
        p.msg(2, tree);
    });
    counter_packets(&mut out, d);
    // Per CPU, in time order (records are already time-ordered).
    let mut curr: Vec<u32> = vec![0; d.nr_cpus];
    let mut per_cpu: Vec<Vec<Pb>> = (0..d.nr_cpus).map(|_| vec![]).collect();
    let mut first_ts: Vec<u64> = vec![0; d.nr_cpus];
    for r in &d.records {
        if matches!(r.ev, TraceEvent::Counter { task: Some(_), .. }) {
            continue;
        }
        if per_cpu[r.cpu].is_empty() {
            first_ts[r.cpu] = r.ts;
        }
        let pid = curr[r.cpu];
        per_cpu[r.cpu].push(event_msg(d, r.ts, r.cpu, &r.ev, pid));
        if let TraceEvent::Switch { next, .. } = r.ev {
            curr[r.cpu] = next.map_or(0, |t| d.tasks[t].pid);
        }
    }
    for (cpu, events) in per_cpu.into_iter().enumerate() {
        let mut events = events.into_iter().peekable();
        while events.peek().is_some() {
            let chunk: Vec<Pb> = events.by_ref().take(BUNDLE_EVENTS).collect();
            packet(&mut out, |p| {
                p.uint(8, first_ts[cpu]);
                let mut b = Pb::default();
                b.uint(1, cpu as u64);
                for e in chunk {
                    b.msg(2, e);
                }
                p.msg(1, b);
            });
        }
    }
    out.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_negative_ints() {
        let mut p = Pb::default();
        p.varint(300);
        assert_eq!(p.0, vec![0xAC, 0x02]);
        let mut q = Pb::default();
        q.int(1, -1);
        assert_eq!(q.0.len(), 1 + 10);
    }
}
