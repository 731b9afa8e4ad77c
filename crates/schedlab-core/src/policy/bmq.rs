//! BMQ (BitMap Queue), Project C's interactivity-by-boost policy: the rules
//! of `kernel/sched/bmq.h` on the shared framework of policy/projc.rs.
//! Two versions, because they differ in levels and in two rules:
//!
//! * `bmq`, v6.0-r0 (what seed 002 ran; /work/shared/spec/shootout.md §2.3,
//!   checked against linux-tkg `0009-prjc_v6.0-r0.patch`, bmq.h):
//!   `MAX_PRIORITY_ADJ` 7; RT level = kernel prio (100 levels); a normal
//!   task's level is 50 + (127 + nice + boost_prio) / 2, i.e. 113 at nice 0
//!   and 100..=126 over nice and boost. A slice expiry of a queued
//!   non-RT task deboosts (+1, cap +7). Blocking boosts (−1, floor −7 for
//!   SCHED_NORMAL, 0 for BATCH/IDLE) if the CPU switched to the task less
//!   than `slice >> (8 − boost_prio)` ns ago (16.4 µs at boost 0, 2.1 ms at
//!   +7). A wakeup boosts once more if the task last ran more than one slice
//!   ago. Fork: boost +7. Yield (type 1): boost +7, no requeue.
//! * `bmq-6.12`, v6.12-r1 (/work/shared/spec/alt-schedulers.md §3, checked
//!   against zen-kernel bmq.h): `MAX_PRIORITY_ADJ` 12; RT level = prio >> 2
//!   (25 levels); normal level 32 + (160 + nice + boost_prio − 128) / 2,
//!   48 at nice 0, 32..=63. Every block boosts by 1 (no threshold); the
//!   wakeup boost adds `(clock > last_ran) >> 22` = 0 (the comparison bug
//!   the spec notes); deboost only SCHED_NORMAL/BATCH. Fork keeps the
//!   boost copied from the parent (`sched_task_fork` is empty; a task the
//!   launcher creates starts at 0 — unverified, the 6.12 `sched_fork` was
//!   not read). Slice renewal deboosts whether or not the task is queued
//!   (the 6.12 `time_slice_expired` was not read; the spec lists renew
//!   before the requeue condition).
//!
//! Different levels are strict priority: two hogs on one CPU whose
//! levels differ never share it; with equal levels they alternate whole
//! slices. Hogs deboost to +ADJ after ADJ slices, so in the steady state a
//! hog's level is fixed by nice alone: nice n and n + 2 are one level apart.

use super::projc::{self, ProjcRules, TaskSched, YieldRule, PROJC_TUNABLES};
use crate::clock::Ns;
use crate::plugin::SchedulerDef;
use crate::task::Task;
use crate::workload::Policy;

/// The BMQ version modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BmqVersion {
    /// v6.0-r0 (shootout.md §2.3).
    V6_0,
    /// v6.12-r1 (alt-schedulers.md §3).
    V6_12,
}

/// BMQ's rules.
#[derive(Debug, Clone, Copy)]
pub struct Bmq {
    /// Version.
    pub version: BmqVersion,
}

impl Bmq {
    /// `MAX_PRIORITY_ADJ`.
    pub fn max_adj(&self) -> i32 {
        match self.version {
            BmqVersion::V6_0 => 7,
            BmqVersion::V6_12 => 12,
        }
    }

    /// `boost_task` by `n`: floor −ADJ for SCHED_NORMAL, 0 for BATCH (and
    /// IDLE in v6.0); other policies never boost.
    fn boost(&self, t: &Task, s: &mut TaskSched, n: i32) {
        let limit = match (t.policy, self.version) {
            (Policy::Other, _) => -self.max_adj(),
            (Policy::Batch, _) | (Policy::Idle, BmqVersion::V6_0) => 0,
            _ => return,
        };
        s.boost_prio = match self.version {
            // `if (p->boost_prio > limit) p->boost_prio--`
            BmqVersion::V6_0 if s.boost_prio > limit => s.boost_prio - n,
            BmqVersion::V6_0 => s.boost_prio,
            // `max(limit, p->boost_prio - n)`
            BmqVersion::V6_12 => (s.boost_prio - n).max(limit),
        };
    }
}

impl ProjcRules for Bmq {
    fn class_name(&self) -> &'static str {
        "bmq"
    }

    fn levels(&self) -> usize {
        match self.version {
            // SCHED_BITS 128 less the idle level.
            BmqVersion::V6_0 => 127,
            // SCHED_LEVELS 65 less the idle level.
            BmqVersion::V6_12 => 64,
        }
    }

    fn rt_level(&self, prio: usize) -> usize {
        match self.version {
            BmqVersion::V6_0 => prio,
            BmqVersion::V6_12 => prio >> 2,
        }
    }

    fn normal_level(&self, t: &Task, s: &TaskSched, _edge: u64) -> usize {
        let nice = t.nice.clamp(-20, 19);
        let l = match self.version {
            BmqVersion::V6_0 => 50 + (127 + nice + s.boost_prio) / 2,
            BmqVersion::V6_12 => 32 + (160 + nice + s.boost_prio - 128) / 2,
        };
        l.max(0) as usize
    }

    fn renew(&self, t: &Task, s: &mut TaskSched, _edge: u64, queued: bool) {
        let deboost = match self.version {
            // Only a queued task that is neither SCHED_FIFO nor SCHED_RR.
            BmqVersion::V6_0 => queued && projc::rt_prio(t).is_none(),
            BmqVersion::V6_12 => matches!(t.policy, Policy::Other | Policy::Batch),
        };
        if deboost {
            s.boost_prio = (s.boost_prio + 1).min(self.max_adj());
        }
    }

    fn fork(&self, _t: &Task, s: &mut TaskSched, parent: Option<&TaskSched>, _edge: u64) {
        s.boost_prio = match self.version {
            BmqVersion::V6_0 => self.max_adj(),
            BmqVersion::V6_12 => parent.map_or(0, |p| p.boost_prio),
        };
    }

    fn ttwu(&self, t: &Task, s: &mut TaskSched, slept: Ns, slice: Ns) {
        // v6.12 computes the boost from a boolean: 0 or 1 >> 22, i.e. 0.
        if self.version == BmqVersion::V6_0 && slept > slice {
            self.boost(t, s, 1);
        }
    }

    fn deactivate(&self, t: &Task, s: &mut TaskSched, ran: Ns, slice: Ns) {
        match self.version {
            BmqVersion::V6_0 => {
                // boost_threshold: slice >> (15 − ADJ − boost_prio).
                let shift = (15 - self.max_adj() - s.boost_prio).clamp(0, 63) as u32;
                if ran < slice >> shift {
                    self.boost(t, s, 1);
                }
            }
            BmqVersion::V6_12 => self.boost(t, s, 1),
        }
    }

    fn yield_type1(&self, _t: &Task, s: &mut TaskSched, _edge: u64) -> YieldRule {
        s.boost_prio = self.max_adj();
        YieldRule::InPlace
    }
}

/// `bmq`: v6.0-r0.
pub const DEF: SchedulerDef = SchedulerDef {
    name: "bmq",
    description: "Project C BMQ v6.0-r0 (seed 002): whole-scheduler bitmap queue, 4 ms slices, boost/deboost of ±7 half-levels, pull-on-idle, no periodic balancing",
    source: "shootout.md §2; linux-tkg 0009-prjc_v6.0-r0.patch (alt_core.c, bmq.h)",
    version: "v6.0-r0",
    classes: &["bmq"],
    tunables: PROJC_TUNABLES,
    fair_policies: false,
    dl_orders: false,
    build: |ctx| {
        projc::build(
            ctx,
            Bmq {
                version: BmqVersion::V6_0,
            },
        )
    },
};

/// `bmq-6.12`: v6.12-r1.
pub const DEF_6_12: SchedulerDef = SchedulerDef {
    name: "bmq-6.12",
    description:
        "Project C BMQ v6.12-r1: 65 levels, ±12 boost, boost on every block, no wakeup boost",
    source: "alt-schedulers.md §3; zen-kernel kernel/sched/{alt_core.c,bmq.h} v6.12-r1",
    version: "v6.12-r1",
    classes: &["bmq"],
    tunables: PROJC_TUNABLES,
    fair_policies: false,
    dl_orders: false,
    build: |ctx| {
        projc::build(
            ctx,
            Bmq {
                version: BmqVersion::V6_12,
            },
        )
    },
};
