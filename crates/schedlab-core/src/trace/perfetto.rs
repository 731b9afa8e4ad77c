//! Perfetto native protobuf export (`.pftrace`), ../shared/formats.md §2.5.
//!
//! Hand-rolled encoding of the messages we need (no protoc, no generated
//! code): a clock snapshot, `SystemInfo` and one `ProcessTree` packet; the
//! task counters as track descriptors and `TrackEvent` counters; then
//! per-CPU `FtraceEventBundle` packets of at most [`BUNDLE_EVENTS`] events,
//! each in time order, switches and wakings alone at their time in the
//! bundle's `compact_sched` columns (see `cpu_bundles`). Nested messages
//! are written in place (`Pb::nested`) and the packets go to the output
//! in pieces ([`write()`]). Field numbers were checked against the generated
//! classes of the `perfetto` PyPI package (0.59.1), and a pytest decodes our
//! output with them.

use super::{PrevState, TraceData, TraceEvent};

/// Events per `FtraceEventBundle` packet.
pub const BUNDLE_EVENTS: usize = 4096;
/// `trusted_packet_sequence_id` of the ftrace bundles and the first packets.
const SEQ_ID: u64 = 1;
/// The sequence of the counter tracks (their descriptors and `TrackEvent`s),
/// whose timestamps are deltas on [`CLOCK_INCREMENTAL`].
const COUNTER_SEQ_ID: u64 = 2;

/// Minimal protobuf writer.
#[derive(Default)]
struct Pb(Vec<u8>);

impl Pb {
    fn varint(&mut self, v: u64) {
        super::put_varint(&mut self.0, v);
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
    /// A nested message written in place: its length is patched in after
    /// the body (the minimal varint, so the bytes are those of [`Self::msg`]),
    /// with no buffer per message.
    fn nested(&mut self, field: u32, body: impl FnOnce(&mut Pb)) {
        self.key(field, 2);
        let at = self.0.len();
        self.0.push(0);
        body(self);
        let len = self.0.len() - at - 1;
        if len < 0x80 {
            self.0[at] = len as u8;
            return;
        }
        let mut v = Pb(Vec::with_capacity(10));
        v.varint(len as u64);
        self.0.splice(at..at + 1, v.0);
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

/// A sequence-scoped clock (ids 64..127, clock_snapshot.proto) whose
/// timestamps are deltas from the sequence's previous packet on it
/// (`Clock.is_incremental`), as the Perfetto SDK writes its `TrackEvent`s.
const CLOCK_INCREMENTAL: u64 = 64;

/// sched_waking / sched_wakeup / sched_wakeup_new: `comm pid prio
/// target_cpu`, the fields of the 6.x format (include/trace/events/sched.h
/// `sched_wakeup_template`; this VM's 6.18 tracefs, ../shared/host.md
/// §1.1). The proto's `success` (field 4) is a field older kernels had;
/// a 6.x recorder leaves it out, and so do we.
fn wake_msg(m: &mut Pb, (comm, pid, prio): (&str, u32, i32), target_cpu: usize) {
    m.bytes(1, comm.as_bytes());
    m.int(2, pid as i64);
    m.int(3, prio as i64);
    m.int(5, target_cpu as i64);
}

/// (comm slot, comm, pid, prio) of task `t`, or of the CPU's idle task
/// (`idle_comm`, pid 0, prio 120, slot after every task's).
fn ident_of<'a>(
    d: &'a TraceData,
    t: Option<usize>,
    idle_comm: &'a str,
) -> (usize, &'a str, u32, i32) {
    match t {
        Some(t) => (t, d.tasks[t].comm.as_str(), d.tasks[t].pid, d.tasks[t].prio),
        None => (d.tasks.len(), idle_comm, 0, 120),
    }
}

/// One `FtraceEvent` (field 2 of its bundle `b`); `idle_comm` names the
/// CPU's idle task.
fn write_event(b: &mut Pb, d: &TraceData, r: &super::Record, curr_pid: u32, idle_comm: &str) {
    let (ts, cpu) = (r.ts, r.cpu);
    let ident = |t: Option<usize>| {
        let (_, comm, pid, prio) = ident_of(d, t, idle_comm);
        (comm, pid, prio)
    };
    b.nested(2, |e| {
        e.uint(1, ts);
        e.uint(2, curr_pid as u64);
        match r.ev {
            TraceEvent::Switch {
                prev,
                prev_state,
                next,
            } => {
                let (pc, pp, ppr) = ident(prev);
                let (nc, np, npr) = ident(next);
                e.nested(4, |m| {
                    m.bytes(1, pc.as_bytes());
                    m.int(2, pp as i64);
                    m.int(3, ppr as i64);
                    m.int(4, state_bits(prev_state, prev.is_none()));
                    m.bytes(5, nc.as_bytes());
                    m.int(6, np as i64);
                    m.int(7, npr as i64);
                });
            }
            TraceEvent::Waking { task, target_cpu } => {
                e.nested(20, |m| wake_msg(m, ident(Some(task)), target_cpu));
            }
            TraceEvent::Wakeup { task } => {
                e.nested(17, |m| wake_msg(m, ident(Some(task)), cpu));
            }
            TraceEvent::WakeupNew { task } => {
                e.nested(114, |m| wake_msg(m, ident(Some(task)), cpu));
            }
            TraceEvent::Migrate {
                task,
                orig_cpu,
                dest_cpu,
            } => {
                let (c, p, pr) = ident(Some(task));
                e.nested(491, |m| {
                    m.bytes(1, c.as_bytes());
                    m.int(2, p as i64);
                    m.int(3, pr as i64);
                    m.int(4, orig_cpu as i64);
                    m.int(5, dest_cpu as i64);
                });
            }
            TraceEvent::Exit { task } => {
                let (c, p, pr) = ident(Some(task));
                e.nested(238, |m| {
                    m.bytes(1, c.as_bytes());
                    m.int(2, p as i64);
                    m.int(3, d.tasks[task].tgid as i64);
                    m.int(4, pr as i64);
                });
            }
            // A CPU's frequency is the kernel's power:cpu_frequency (state in
            // kHz), which Perfetto draws as the CPU's frequency track.
            TraceEvent::CpuFrequency { khz } => {
                e.nested(11, |m| {
                    m.uint(1, khz);
                    m.uint(2, cpu as u64);
                });
            }
        }
    });
}

/// The `Trace` message being written: top-level packets go to `sink` in
/// pieces of about [`Out::FLUSH`] bytes (a `Trace` is a sequence of
/// packets, so the file is the same as one encoded in memory).
struct Out<'a> {
    pb: Pb,
    sink: &'a mut dyn std::io::Write,
    err: std::io::Result<()>,
}

impl Out<'_> {
    const FLUSH: usize = 4 << 20;

    fn flush(&mut self) {
        if self.err.is_ok() {
            self.err = self.sink.write_all(&self.pb.0);
        }
        self.pb.0.clear();
    }
}

fn packet(out: &mut Out, body: impl FnOnce(&mut Pb)) {
    packet_on(out, SEQ_ID, body);
}

/// A top-level packet of sequence `seq`.
fn packet_on(out: &mut Out, seq: u64, body: impl FnOnce(&mut Pb)) {
    out.pb.nested(1, |p| {
        body(p);
        p.uint(10, seq);
    });
    if out.pb.0.len() >= Out::FLUSH {
        out.flush();
    }
}

/// A `TrackDescriptor` packet for track `uuid` on the counter sequence
/// (`since`: its delta timestamp), its other fields by `body`.
fn track_descriptor(out: &mut Out, since: u64, uuid: u64, body: impl FnOnce(&mut Pb)) {
    packet_on(out, COUNTER_SEQ_ID, |p| {
        p.uint(8, since);
        p.nested(60, |td| {
            td.uint(1, uuid);
            body(td);
        });
    });
}

/// Task counters (vruntime, deadline, lag, ... at each switch) as Perfetto
/// counter tracks: one thread track per task, under it one counter track per
/// value. The values a task gave at one switch are one `TrackEvent` of type
/// COUNTER: the first on its own track (`counter_value`), the others as
/// `extra_counter_track_uuids` / `extra_counter_values` (which the trace
/// processor reads on counter events too).
///
/// They are most of a trace's packets, so they are written small, the way
/// the Perfetto SDK writes its track events: on a sequence of their own
/// whose first packet clears its incremental state, makes
/// [`CLOCK_INCREMENTAL`] the default clock of its packets
/// (`TracePacketDefaults.timestamp_clock_id`) and gives that clock beside
/// BOOTTIME, both 0 (`ClockSnapshot`); each packet after it carries the time
/// since the one before (1 to 3 bytes where a time of seconds takes 5). Track
/// uuids, thread and counter tracks alike, are numbered from 1 in order of
/// first appearance (deterministic bytes; one or two bytes each).
fn counter_packets(out: &mut Out, d: &TraceData) {
    const TRACK_EVENT_COUNTER: u64 = 4;
    const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
    let c = &d.counters;
    if c.is_empty() {
        return;
    }
    packet_on(out, COUNTER_SEQ_ID, |p| {
        p.uint(13, SEQ_INCREMENTAL_STATE_CLEARED);
        p.nested(59, |defaults| defaults.uint(58, CLOCK_INCREMENTAL));
        p.nested(6, |snap| {
            snap.nested(1, |clock| {
                clock.uint(1, CLOCK_BOOTTIME);
                clock.uint(2, 0);
            });
            snap.nested(1, |clock| {
                clock.uint(1, CLOCK_INCREMENTAL);
                clock.uint(2, 0);
                clock.uint(3, 1); // is_incremental
            });
        });
    });
    let names = c.names.len().max(1);
    let mut thread_uuid: Vec<u64> = vec![0; d.tasks.len()];
    let mut track_uuid: Vec<u64> = vec![0; d.tasks.len() * names];
    let mut next_uuid = 1u64;
    let mut last_ts = 0u64;
    let mut since = |ts: u64| {
        let delta = ts - last_ts;
        last_ts = ts;
        delta
    };
    c.for_each_group(|ts, t, group| {
        let t = t as usize;
        if thread_uuid[t] == 0 {
            let u = next_uuid;
            next_uuid += 1;
            thread_uuid[t] = u;
            track_descriptor(out, since(ts), u, |td| {
                td.nested(4, |th| {
                    th.int(1, d.tasks[t].tgid as i64);
                    th.int(2, d.tasks[t].pid as i64);
                    th.bytes(5, d.tasks[t].comm.as_bytes());
                });
            });
        }
        for &(name, _) in group {
            let slot = t * names + usize::from(name);
            if track_uuid[slot] == 0 {
                let u = next_uuid;
                next_uuid += 1;
                track_uuid[slot] = u;
                track_descriptor(out, since(ts), u, |td| {
                    td.uint(5, thread_uuid[t]);
                    td.bytes(2, c.names[usize::from(name)].as_bytes());
                    td.msg(8, Pb::default());
                });
            }
        }
        let uuid = |name: u16| track_uuid[t * names + usize::from(name)];
        let delta = since(ts);
        packet_on(out, COUNTER_SEQ_ID, |p| {
            p.uint(8, delta);
            p.nested(11, |te| {
                te.uint(9, TRACK_EVENT_COUNTER);
                te.uint(11, uuid(group[0].0));
                te.int(30, group[0].1);
                for &(name, _) in &group[1..] {
                    te.uint(31, uuid(name));
                }
                for &(_, value) in &group[1..] {
                    te.int(12, value);
                }
            });
        });
    });
}

/// Encode a whole trace as a Perfetto `Trace` message.
pub fn encode(d: &TraceData) -> Vec<u8> {
    let mut v = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(d, &mut v);
    v
}

/// Write a whole trace as a Perfetto `Trace` message to `sink`, in pieces
/// (no copy of the whole file in memory).
pub fn write(d: &TraceData, sink: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut out = Out {
        pb: Pb::default(),
        sink,
        err: Ok(()),
    };
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
    cpu_bundles(&mut out, d);
    out.flush();
    out.err
}

/// The columns of `FtraceEventBundle.CompactSched` for one bundle: the
/// encoding Perfetto's own recorder uses for sched_switch and sched_waking
/// (a few bytes per event instead of about 35; the trace processor and
/// `schedlab trace import` rebuild the omitted fields: a switch's prev_*
/// from the CPU's previous switch, a waking's waker from the CPU's
/// current task).
#[derive(Default)]
struct CompactSched {
    intern: Vec<u8>,
    /// Per task (and per CPU's idle task after them): (bundle stamp, index).
    comm_index: Vec<(u32, u32)>,
    stamp: u32,
    strings: u32,
    switch: [Pb; 5],
    last_switch: u64,
    waking: [Pb; 5],
    last_waking: u64,
}

impl CompactSched {
    fn start(&mut self, slots: usize) {
        self.comm_index.resize(slots, (0, 0));
        self.stamp += 1;
        self.strings = 0;
        self.intern.clear();
        for f in self.switch.iter_mut().chain(self.waking.iter_mut()) {
            f.0.clear();
        }
        (self.last_switch, self.last_waking) = (0, 0);
    }

    fn comm(&mut self, slot: usize, comm: &str) -> u64 {
        let (stamp, ix) = self.comm_index[slot];
        if stamp == self.stamp {
            return u64::from(ix);
        }
        let mut p = Pb(std::mem::take(&mut self.intern));
        p.bytes(5, comm.as_bytes());
        self.intern = p.0;
        self.comm_index[slot] = (self.stamp, self.strings);
        self.strings += 1;
        u64::from(self.strings - 1)
    }

    /// Add `r` to the columns if it is a switch or a waking (else false).
    fn push(&mut self, d: &TraceData, r: &super::Record, idle_comm: &str) -> bool {
        let ident = |t: Option<usize>| ident_of(d, t, idle_comm);
        match r.ev {
            TraceEvent::Switch {
                prev,
                prev_state,
                next,
            } => {
                let (slot, comm, pid, prio) = ident(next);
                let ix = self.comm(slot, comm);
                let col = &mut self.switch;
                col[0].varint(r.ts - self.last_switch);
                col[1].varint(state_bits(prev_state, prev.is_none()) as u64);
                col[2].varint(u64::from(pid));
                col[3].varint(prio as i64 as u64);
                col[4].varint(ix);
                self.last_switch = r.ts;
            }
            TraceEvent::Waking { task, target_cpu } => {
                let (slot, comm, pid, prio) = ident(Some(task));
                let ix = self.comm(slot, comm);
                let col = &mut self.waking;
                col[0].varint(r.ts - self.last_waking);
                col[1].varint(u64::from(pid));
                col[2].varint(target_cpu as u64);
                col[3].varint(prio as i64 as u64);
                col[4].varint(ix);
                self.last_waking = r.ts;
            }
            _ => return false,
        }
        true
    }

    fn write(&self, bundle: &mut Pb) {
        // Every event has a timestamp in its kind's first column.
        if self.switch[0].0.is_empty() && self.waking[0].0.is_empty() {
            return;
        }
        bundle.nested(4, |m| {
            m.0.extend_from_slice(&self.intern);
            for (field, col) in [1, 2, 3, 4, 6].into_iter().zip(&self.switch) {
                if !col.0.is_empty() {
                    m.bytes(field, &col.0);
                }
            }
            for (field, col) in [7, 8, 9, 10, 11].into_iter().zip(&self.waking) {
                if !col.0.is_empty() {
                    m.bytes(field, &col.0);
                }
            }
        });
    }
}

/// One CPU's bundle being filled by [`cpu_bundles`].
#[derive(Default)]
struct CpuBundle {
    /// The `FtraceEventBundle` body so far.
    body: Pb,
    cs: CompactSched,
    /// Records in the body; the first one's time.
    n: usize,
    first_ts: u64,
    /// pid of the CPU's current task (an `FtraceEvent`'s `pid`).
    curr: u32,
    /// The CPU's record waiting for its successor (to know whether it is
    /// alone at its time), and the time of the one before it.
    pending: Option<super::Record>,
    prev_ts: Option<u64>,
}

/// Per CPU, its records in time order as `FtraceEventBundle` packets of at
/// most [`BUNDLE_EVENTS`] events. A switch or a waking goes in the compact
/// columns when it is the only record of its CPU at its time (the columns
/// keep no order with other events of the same time); every other record
/// is a full `FtraceEvent`.
///
/// One pass over the records in time order, each CPU filling its own
/// bundle and writing it out when full, so the CPUs' packets interleave as
/// in a trace Perfetto records (its readers gather each CPU's bundles in
/// order). Why: a pass per CPU read the records scattered across memory,
/// and a cache miss per record was most of the encoding's time.
fn cpu_bundles(out: &mut Out, d: &TraceData) {
    let idle: Vec<String> = (0..d.nr_cpus).map(|c| format!("swapper/{c}")).collect();
    let mut cpus: Vec<CpuBundle> = (0..d.nr_cpus).map(|_| CpuBundle::default()).collect();
    for r in &d.records {
        let b = &mut cpus[r.cpu];
        if let Some(j) = b.pending.replace(r) {
            bundle_push(out, d, &idle, b, &j, Some(r.ts));
        }
    }
    for b in &mut cpus {
        if let Some(j) = b.pending.take() {
            bundle_push(out, d, &idle, b, &j, None);
        }
        bundle_close(out, b);
    }
}

/// Add record `r` to its CPU's bundle `b` (`next_ts`: the time of the
/// CPU's next record), writing the bundle out when full.
fn bundle_push(
    out: &mut Out,
    d: &TraceData,
    idle: &[String],
    b: &mut CpuBundle,
    r: &super::Record,
    next_ts: Option<u64>,
) {
    if b.n == 0 {
        b.cs.start(d.tasks.len() + 1);
        b.body.0.clear();
        b.body.uint(1, r.cpu as u64);
        b.first_ts = r.ts;
    }
    let alone = b.prev_ts != Some(r.ts) && next_ts != Some(r.ts);
    if !(alone && b.cs.push(d, r, &idle[r.cpu])) {
        write_event(&mut b.body, d, r, b.curr, &idle[r.cpu]);
    }
    if let TraceEvent::Switch { next, .. } = r.ev {
        b.curr = next.map_or(0, |t| d.tasks[t].pid);
    }
    b.prev_ts = Some(r.ts);
    b.n += 1;
    if b.n == BUNDLE_EVENTS {
        bundle_close(out, b);
    }
}

/// Write `b` out as one packet, if it holds any record.
fn bundle_close(out: &mut Out, b: &mut CpuBundle) {
    if b.n == 0 {
        return;
    }
    b.cs.write(&mut b.body);
    let (ts, body) = (b.first_ts, &b.body.0);
    packet(out, |p| {
        p.uint(8, ts);
        p.bytes(1, body);
    });
    b.n = 0;
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
