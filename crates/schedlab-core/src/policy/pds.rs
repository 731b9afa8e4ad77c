//! PDS (Priority and Deadline based Skiplist, now a rotating bitmap
//! queue), Project C's deadline policy: the rules of `kernel/sched/pds.h`
//! on the shared framework of policy/projc.rs. Normal tasks carry a virtual
//! deadline in "edges" (a run queue's clock shifted right) that is renewed
//! only when a slice expires (and at fork and yield), never at wakeup; the
//! queue level is the deadline's distance from the current edge, so the
//! task with the earliest deadline runs first, FIFO within an edge, and a
//! sleeper whose deadline has passed comes back at the first normal level,
//! ahead of every CPU hog.
//!
//! * `pds`, v6.0-r0 (seed 002; /work/shared/spec/shootout.md §2.4, checked
//!   against linux-tkg `0009-prjc_v6.0-r0.patch`, pds.h): edge = clock >>
//!   22 (4.19 ms; 21 with `timeslice_ms=2`), deadline = edge + nice + 20,
//!   level 128 + clamp(deadline − edge + 24, 0, 63) (nice 0 fresh → 172),
//!   64 ring slots, RT level = kernel prio. Yield (type 1) =
//!   `time_slice_expired`: new deadline and requeue. Migration clamps the
//!   deadline to edge + 39.
//! * `pds-6.12`, v6.12-r1 (/work/shared/spec/alt-schedulers.md §3, checked
//!   against zen-kernel pds.h): edge = clock >> 23 (8.39 ms), deadline =
//!   edge + 12 + (nice + 20) / 2, level 32 + max(deadline, edge) − edge
//!   (nice 0 fresh → 54), 32 ring slots, RT level = prio >> 2. Yield
//!   refills and renews the deadline without requeueing. Migration clamps
//!   the deadline to edge + 31.
//!
//! Nice shares for hogs on one CPU: a hog's deadline is renewed at each of
//! its slice expiries to now + (nice offset) edges, so hogs whose offsets
//! differ by k edges interleave in deadline order: the lower-nice hog runs
//! every slice whose deadline precedes the other's pending one.

use super::projc::{self, ProjcRules, TaskSched, YieldRule, PROJC_TUNABLES};
use crate::plugin::SchedulerDef;
use crate::task::Task;

/// The PDS version modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdsVersion {
    /// v6.0-r0 (shootout.md §2.4).
    V6_0,
    /// v6.12-r1 (alt-schedulers.md §3).
    V6_12,
}

/// PDS's rules.
#[derive(Debug, Clone, Copy)]
pub struct Pds {
    /// Version.
    pub version: PdsVersion,
    /// `sched_timeslice_shift`.
    pub shift: u32,
}

impl Pds {
    /// The rules of `version` for a run with `timeslice_ms` (v6.0: shift
    /// 21 with 2 ms slices, `sched_timeslice_imp`).
    pub fn new(version: PdsVersion, timeslice_ms: i64) -> Self {
        let shift = match version {
            PdsVersion::V6_0 if timeslice_ms == 2 => 21,
            PdsVersion::V6_0 => 22,
            PdsVersion::V6_12 => 23,
        };
        Pds { version, shift }
    }

    /// Ring slots (`NORMAL_PRIO_NUM` / `SCHED_NORMAL_PRIO_NUM`).
    fn slots(&self) -> usize {
        match self.version {
            PdsVersion::V6_0 => 64,
            PdsVersion::V6_12 => 32,
        }
    }

    /// First normal level.
    fn base(&self) -> usize {
        match self.version {
            PdsVersion::V6_0 => 128,
            PdsVersion::V6_12 => 32,
        }
    }

    /// Latest deadline a migrated task may keep, relative to the edge.
    fn max_offset(&self) -> u64 {
        match self.version {
            PdsVersion::V6_0 => 39,
            PdsVersion::V6_12 => 31,
        }
    }
}

impl ProjcRules for Pds {
    fn class_name(&self) -> &'static str {
        "pds"
    }

    fn levels(&self) -> usize {
        self.base() + self.slots()
    }

    fn ring(&self) -> Option<(usize, usize, u32)> {
        Some((self.base(), self.slots(), self.shift))
    }

    fn rt_level(&self, prio: usize) -> usize {
        match self.version {
            PdsVersion::V6_0 => prio,
            PdsVersion::V6_12 => prio >> 2,
        }
    }

    fn normal_level(&self, _t: &Task, s: &TaskSched, edge: u64) -> usize {
        let last = self.slots() as i128 - 1;
        let rel = match self.version {
            // deadline − time_edge + NORMAL_PRIO_NUM − NICE_WIDTH, clamped.
            PdsVersion::V6_0 => (s.deadline as i128 - edge as i128 + 24).clamp(0, last),
            PdsVersion::V6_12 => (s.deadline.max(edge) - edge).min(last as u64) as i128,
        };
        self.base() + rel as usize
    }

    fn renew(&self, t: &Task, s: &mut TaskSched, edge: u64, _queued: bool) {
        if projc::rt_prio(t).is_some() {
            return;
        }
        let offset = (t.nice.clamp(-20, 19) + 20) as u64;
        s.deadline = match self.version {
            PdsVersion::V6_0 => edge + offset,
            PdsVersion::V6_12 => edge + 12 + offset / 2,
        };
    }

    fn fork(&self, t: &Task, s: &mut TaskSched, _parent: Option<&TaskSched>, edge: u64) {
        self.renew(t, s, edge, false);
    }

    fn yield_type1(&self, _t: &Task, _s: &mut TaskSched, _edge: u64) -> YieldRule {
        match self.version {
            PdsVersion::V6_0 => YieldRule::Expire,
            PdsVersion::V6_12 => YieldRule::Renew,
        }
    }

    fn sanity_check(&self, s: &mut TaskSched, edge: u64) {
        s.deadline = s.deadline.min(edge + self.max_offset());
    }
}

fn timeslice_ms(ctx: &crate::plugin::StackCtx) -> i64 {
    ctx.tunables.get("timeslice_ms").unwrap_or(4)
}

/// `pds`: v6.0-r0.
pub const DEF: SchedulerDef = SchedulerDef {
    name: "pds",
    description: "Project C PDS v6.0-r0 (seed 002): whole-scheduler rotating deadline queue, 4.19 ms edges, deadline = edge + nice + 20, pull-on-idle, no periodic balancing",
    source: "shootout.md §2; linux-tkg 0009-prjc_v6.0-r0.patch (alt_core.c, pds.h)",
    version: "v6.0-r0",
    classes: &["pds"],
    tunables: PROJC_TUNABLES,
    fair_policies: false,
    dl_orders: false,
    build: |ctx| projc::build(ctx, Pds::new(PdsVersion::V6_0, timeslice_ms(ctx))),
};

/// `pds-6.12`: v6.12-r1.
pub const DEF_6_12: SchedulerDef = SchedulerDef {
    name: "pds-6.12",
    description:
        "Project C PDS v6.12-r1: 65 levels, 8.39 ms edges, deadline = edge + 12 + (nice + 20) / 2",
    source: "alt-schedulers.md §3; zen-kernel kernel/sched/{alt_core.c,pds.h} v6.12-r1",
    version: "v6.12-r1",
    classes: &["pds"],
    tunables: PROJC_TUNABLES,
    fair_policies: false,
    dl_orders: false,
    build: |ctx| projc::build(ctx, Pds::new(PdsVersion::V6_12, timeslice_ms(ctx))),
};
