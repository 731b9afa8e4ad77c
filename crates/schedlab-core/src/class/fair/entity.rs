//! Scheduling entities and fair run queues (`struct sched_entity`,
//! `struct cfs_rq`), linux-cfs.md §1 and linux-eevdf.md §1.
//!
//! The running entity is not in the tree (`set_next_entity` removes it).
//! The tree is keyed by vruntime (CFS) or virtual deadline (EEVDF 6.12),
//! with an insertion sequence so equal keys keep FIFO order ("ties go to the
//! right"). EEVDF's `avg_vruntime`/`avg_load` sums cover tree entities only;
//! the current entity is added on the fly.

use super::weights::LoadWeight;
use crate::pelt::Pelt;
use crate::task::TaskId;
use std::collections::BTreeSet;

/// Index into `Fair::se`.
pub type SeId = usize;
/// Index into `Fair::cfs`.
pub type RqId = usize;

/// A task or group scheduling entity.
#[derive(Debug, Clone)]
pub struct Entity {
    /// Weight and inverse.
    pub lw: LoadWeight,
    /// Virtual runtime.
    pub vruntime: i64,
    /// Virtual deadline (EEVDF).
    pub deadline: i64,
    /// Requested slice, wall ns (EEVDF).
    pub slice: u64,
    /// The slice was set explicitly (custom slice, or group min slice).
    pub custom_slice: bool,
    /// Saved virtual lag (EEVDF); equals `deadline` while slice-protected.
    pub vlag: i64,
    /// `deadline` holds a relative value (PLACE_REL_DEADLINE).
    pub rel_deadline: bool,
    /// Dequeue delayed (EEVDF DELAY_DEQUEUE).
    pub delayed: bool,
    /// Total runtime.
    pub sum_exec: u64,
    /// `sum_exec` when last picked.
    pub prev_sum_exec: u64,
    /// Start of the current accounting interval.
    pub exec_start: u64,
    /// Queued (includes current and delayed).
    pub on_rq: bool,
    /// Queue it is (or would be) on.
    pub cfs_rq: RqId,
    /// Parent group entity on the same CPU.
    pub parent: Option<SeId>,
    /// For group entities: the queue they represent.
    pub my_q: Option<RqId>,
    /// For task entities: the task.
    pub task: Option<TaskId>,
    /// Depth in the hierarchy (root-level entities: 0).
    pub depth: u32,
    /// Tree key while in the tree.
    pub key: (i64, u64),
    /// Load signal (weight while queued).
    pub load: Pelt,
    /// SCHED_IDLE task (or idle group).
    pub idle: bool,
}

impl Entity {
    /// A fresh entity.
    pub fn new(lw: LoadWeight, cfs_rq: RqId, now: u64) -> Self {
        Entity {
            lw,
            vruntime: 0,
            deadline: 0,
            slice: 0,
            custom_slice: false,
            vlag: 0,
            rel_deadline: false,
            delayed: false,
            sum_exec: 0,
            prev_sum_exec: 0,
            exec_start: now,
            on_rq: false,
            cfs_rq,
            parent: None,
            my_q: None,
            task: None,
            depth: 0,
            key: (0, 0),
            load: Pelt::new(now, lw.weight),
            idle: false,
        }
    }

    /// Weight.
    pub fn w(&self) -> u64 {
        self.lw.weight
    }
}

/// A fair run queue: the root queue of a CPU or a group's queue on a CPU.
#[derive(Debug, Clone)]
pub struct CfsRq {
    /// CPU.
    pub cpu: usize,
    /// Task group (0 = root).
    pub group: usize,
    /// Queued entities except current, by (key, seq).
    pub tree: BTreeSet<(i64, u64, SeId)>,
    /// Entity running at this level.
    pub curr: Option<SeId>,
    /// Sum of weights of queued entities including current (`load.weight`).
    pub load: u64,
    /// Queued entities including current and delayed (`nr_running`).
    pub nr_running: u32,
    /// Runnable tasks in this hierarchy (delayed ones excluded).
    pub h_nr_running: u32,
    /// Monotonic minimum vruntime (CFS).
    pub min_vruntime: i64,
    /// Σ v·w over tree entities (EEVDF, v0 = 0; i128 cannot overflow).
    pub avg_vsum: i128,
    /// Σ w over tree entities (EEVDF).
    pub avg_load: u64,
    /// Last V computed while non-empty: V of an empty queue (EEVDF).
    pub last_v: i64,
    /// Next buddy.
    pub next: Option<SeId>,
    /// Last buddy (CFS).
    pub last: Option<SeId>,
    /// Skip buddy (CFS yield).
    pub skip: Option<SeId>,
    /// PELT of `load` (cfs_rq->avg.load_avg).
    pub pelt: Pelt,
    /// This queue's contribution to its group's load_avg.
    pub tg_contrib: i64,
}

impl CfsRq {
    /// An empty queue.
    pub fn new(cpu: usize, group: usize) -> Self {
        CfsRq {
            cpu,
            group,
            tree: BTreeSet::new(),
            curr: None,
            load: 0,
            nr_running: 0,
            h_nr_running: 0,
            min_vruntime: 0,
            avg_vsum: 0,
            avg_load: 0,
            last_v: 0,
            next: None,
            last: None,
            skip: None,
            pelt: Pelt::default(),
            tg_contrib: 0,
        }
    }

    /// Leftmost queued entity.
    pub fn first(&self) -> Option<SeId> {
        self.tree.first().map(|k| k.2)
    }
}
