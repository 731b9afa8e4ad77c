//! BORE 1.7.3 (Burst-Oriented Response Enhancer, Masahito Suzuki) on CFS:
//! registry name `bore-1.7`. Spec: /work/shared/spec/shootout.md §1 (what
//! seed 002 ran on Linux 6.0.9); patch `firelzrd/bore-scheduler:
//! bore/0001-linux6.0.9-bore1.7.3.patch` (and its `-without-sysctl-tweak`
//! twin) @ 7c793fd6d7f0. The CFS underneath is this simulator's Linux 6.1
//! model (linux-cfs.md), which the spec treats as ≈ 6.0.
//!
//! Each task accumulates `burst_time`, the CPU time it used since it last
//! slept or yielded (`update_curr`). On sleep (`dequeue_task_fair` with
//! DEQUEUE_SLEEP) and yield the burst is folded into `prev_burst_time =
//! (prev_burst_time + burst_time) / 2` and restarts at 0 (§1.1). A CPU hog
//! that is only preempted never resets: its burst grows for its whole life.
//!
//! The burst score (§1.2, `update_burst_score`, bit-exact): with
//! `bc = max(burst_time, prev_burst_time) >> burst_granularity` (32 ns
//! units), `p10` = bit length of `bc` in the integer part and the 10 bits
//! after its leading 1 as fraction (≈ log2(bc) + 1), score =
//! `min(p10 · burst_penalty_scale >> 20, 39)`. The score scales how fast
//! the task's vruntime grows: `vruntime += calc_delta_fair(δ) ·
//! wmult[score] >> 22`, i.e. as if its nice were `nice + score − 20` for
//! vruntime only (load weight, PELT and `sched_slice` unchanged). A 2 ms
//! burst is neutral; shorter bursts run vruntime slower (up to ×0.012) and
//! longer ones faster (×28 after 10 s). The same factor of the wakee scales
//! the wakeup granularity in `check_preempt_wakeup` and in
//! `pick_next_entity`'s next-buddy test (§1.3), so short-burst tasks
//! preempt more easily.
//!
//! Outside the hooks (§1.5, the registry entry's tunable defaults):
//! GENTLE_FAIR_SLEEPERS off (a waking task gets a full `sched_latency` of
//! sleeper credit), and the "sysctl tweak": latency / min_granularity /
//! idle_min_granularity / wakeup_granularity = 12.8 / 1.6 / 1.6 / 4.8 ms
//! with `tunable_scaling` NONE. `sysctl_tweak=0` selects the twin patch,
//! CFS's 6 / 0.75 / 0.75 / 1 ms with log scaling: a knob still at its
//! BORE value takes CFS's default (a knob set to another value keeps it).
//!
//! Fork (§1.4): the patch's sibling average reads an empty list with
//! uninitialised locals (undefined); modelled as the child keeping the
//! parent's `prev_burst_time` and score with `burst_time = 0`.
//!
//! Departures (also in docs/model.md, "BORE"): the kernel scores group
//! entities (cgroups, autogroups) too and scales their vruntime and
//! granularity; here only task entities carry burst state, group entities
//! advance at the plain CFS rate. Reset on sleep happens before the
//! dequeue's `update_curr`, as in the patch, so the time since the last
//! charge counts toward the next burst. `sched_bore=0` keeps the score
//! but no scaling, as in the patch.

use crate::class::fair::hooks::FairHooks;
use crate::class::fair::tunables::{Version, CFS_TUNABLES};
use crate::class::fair::weights::PRIO_TO_WMULT;
use crate::clock::Ns;
use crate::machine::Machine;
use crate::plugin::{SchedulerDef, StackCtx};
use crate::registry::mainline_stack;
use crate::task::TaskId;
use crate::tunable::{concat, with_defaults, Tunable, TunableSet};

/// The "sysctl tweak" (§1.5): BORE's value of each CFS knob it changes.
const SYSCTL_TWEAK: [(&str, i64); 5] = [
    ("latency_ns", 12_800_000),
    ("min_granularity_ns", 1_600_000),
    ("idle_min_granularity_ns", 1_600_000),
    ("wakeup_granularity_ns", 4_800_000),
    ("tunable_scaling", 0),
];

/// CFS's knobs with BORE 1.7.3's defaults: the sysctl tweak, and
/// GENTLE_FAIR_SLEEPERS off (both patch variants).
static CFS_WITH_BORE_DEFAULTS: [Tunable; CFS_TUNABLES.len()] = with_defaults(
    CFS_TUNABLES,
    &[
        SYSCTL_TWEAK[0],
        SYSCTL_TWEAK[1],
        SYSCTL_TWEAK[2],
        SYSCTL_TWEAK[3],
        SYSCTL_TWEAK[4],
        ("gentle_fair_sleepers", 0),
    ],
);

/// BORE 1.7.3's own knobs (`kernel.sched_*` sysctls and the patch choice).
const OWN_TUNABLES: &[Tunable] = &[
    Tunable {
        name: "bore",
        default: 1,
        min: 0,
        max: 1,
        unit: "bool",
        doc: "kernel.sched_bore: 1 scales vruntime growth and wakeup granularity by the burst score; 0 plain CFS accounting (score still kept)",
    },
    Tunable {
        name: "burst_penalty_scale",
        default: 1256,
        min: 0,
        max: 4095,
        unit: "",
        doc: "kernel.sched_burst_penalty_scale: score = min(log2plus1(burst) * scale >> 20, 39), log2 with 10 fraction bits",
    },
    Tunable {
        name: "burst_granularity",
        default: 5,
        min: 0,
        max: 64,
        unit: "",
        doc: "kernel.sched_burst_granularity: bursts are counted in units of 2^this ns",
    },
    Tunable {
        name: "sysctl_tweak",
        default: 1,
        min: 0,
        max: 1,
        unit: "bool",
        doc: "1: the sysctl-tweak patch (latency/min_gran/idle_min_gran/wakeup_gran 12.8/1.6/1.6/4.8 ms, scaling none); 0: the -without-sysctl-tweak twin: those knobs still at BORE's values take CFS's defaults",
    },
];

static TUNABLES: [Tunable; CFS_TUNABLES.len() + OWN_TUNABLES.len()] =
    concat(&[&CFS_WITH_BORE_DEFAULTS, OWN_TUNABLES]);

/// The registry entry.
pub const DEF: SchedulerDef = SchedulerDef {
    name: "bore-1.7",
    description: "BORE 1.7.3 on CFS (Linux 6.1 model, ~6.0.9): burst score scales vruntime growth and wakeup granularity; sysctl-tweak latency preset, no gentle sleepers",
    source: "shootout.md §1; firelzrd/bore-scheduler bore/0001-linux6.0.9-bore1.7.3.patch @ 7c793fd6d7f0",
    version: "1.7.3 (CFS 6.1)",
    classes: &["dl", "rt", "fair"],
    tunables: &TUNABLES,
    fair_policies: false,
    dl_orders: true,
    build,
};

fn build(ctx: &StackCtx) -> Result<crate::class::stack::Stack, String> {
    let tunables = untweaked(ctx.tunables);
    let ctx = StackCtx {
        tunables: &tunables,
        ..*ctx
    };
    let mut stack = mainline_stack(&ctx, Version::Cfs, Box::new(BoreCfs::new(&tunables)))?;
    if ctx.m.groups.len() > 1 {
        stack.warnings.push(
            "bore-1.7 scores tasks only: task-group entities (cgroups, autogroups) advance at the plain CFS rate, while the patch also scales theirs"
                .into(),
        );
    }
    Ok(stack)
}

/// The run's tunables with `sysctl_tweak=0` applied: each tweaked knob
/// still at BORE's value takes CFS's default.
fn untweaked(t: &TunableSet) -> TunableSet {
    let mut t = t.clone();
    if t.get("sysctl_tweak") != Some(0) {
        return t;
    }
    for (name, bore) in SYSCTL_TWEAK {
        let cfs = CFS_TUNABLES
            .iter()
            .find(|x| x.name == name)
            .map(|x| x.default);
        if let (Some(cfs), Some(v)) = (cfs, t.get(name)) {
            if v == bore {
                t.0.insert(name.to_string(), cfs);
            }
        }
    }
    t
}

/// `update_burst_score` (§1.2): the score of a task whose current and
/// previous bursts are `burst_time` and `prev_burst_time` ns.
pub fn burst_score(burst_time: Ns, prev_burst_time: Ns, granularity: u32, scale: u32) -> u8 {
    let bc = burst_time
        .max(prev_burst_time)
        .checked_shr(granularity)
        .unwrap_or(0);
    let msb = 64 - bc.leading_zeros();
    // The bits after the leading 1, as 10 fraction bits (the patch's
    // `bc << ((65 - msb) & 0x3F) >> 54`).
    let fraction = (bc << ((65 - msb) & 0x3f)) >> 54;
    let p10 = u64::from(msb << 10) | fraction;
    ((p10 * u64::from(scale)) >> 20).min(39) as u8
}

/// `burst_scale`: `x · wmult[score] >> 22` (×1024 / weight of nice
/// `score − 20`).
pub fn burst_scale(x: u64, score: u8) -> u64 {
    let wmult = PRIO_TO_WMULT[usize::from(score.min(39))];
    ((u128::from(x) * u128::from(wmult)) >> 22).min(u128::from(u64::MAX)) as u64
}

/// Per-task burst state (`struct sched_entity` fields of the patch).
#[derive(Debug, Clone, Copy, Default)]
struct Burst {
    burst_time: Ns,
    prev_burst_time: Ns,
    score: u8,
}

/// BORE 1.7.3 as fair-class hooks.
#[derive(Debug)]
pub struct BoreCfs {
    enabled: bool,
    penalty_scale: u32,
    granularity: u32,
    tasks: Vec<Burst>,
}

impl BoreCfs {
    /// BORE with the run's tunables.
    pub fn new(t: &TunableSet) -> Self {
        let get = |k: &str, d: i64| t.get(k).unwrap_or(d).max(0);
        BoreCfs {
            enabled: get("bore", 1) != 0,
            penalty_scale: get("burst_penalty_scale", 1256) as u32,
            granularity: get("burst_granularity", 5) as u32,
            tasks: vec![],
        }
    }

    /// The burst score of `t` (0 for a task never seen).
    pub fn score(&self, t: TaskId) -> u8 {
        self.tasks.get(t).map_or(0, |b| b.score)
    }

    fn state(&mut self, t: TaskId) -> &mut Burst {
        if self.tasks.len() <= t {
            self.tasks.resize(t + 1, Burst::default());
        }
        &mut self.tasks[t]
    }

    /// `reset_burst`.
    fn reset(&mut self, t: TaskId) {
        let b = self.state(t);
        b.prev_burst_time =
            ((u128::from(b.prev_burst_time) + u128::from(b.burst_time)) >> 1) as u64;
        b.burst_time = 0;
    }
}

impl FairHooks for BoreCfs {
    fn name(&self) -> &'static str {
        "bore-1.7"
    }

    fn update_curr(&mut self, _m: &Machine, t: TaskId, delta_exec: Ns) {
        let (g, s) = (self.granularity, self.penalty_scale);
        let b = self.state(t);
        b.burst_time = b.burst_time.saturating_add(delta_exec);
        b.score = burst_score(b.burst_time, b.prev_burst_time, g, s);
    }

    fn vruntime_delta(&self, t: TaskId, vdelta: u64) -> u64 {
        if self.enabled {
            burst_scale(vdelta, self.score(t))
        } else {
            vdelta
        }
    }

    fn wakeup_gran(&self, t: TaskId, gran: u64) -> u64 {
        if self.enabled {
            burst_scale(gran, self.score(t))
        } else {
            gran
        }
    }

    fn task_sleep(&mut self, _m: &Machine, t: TaskId) {
        self.reset(t);
    }

    fn burst_yield(&mut self, _m: &Machine, t: TaskId) {
        self.reset(t);
    }

    fn task_fork(&mut self, _m: &Machine, t: TaskId, parent: Option<TaskId>) {
        let inherited = parent.map_or(Burst::default(), |p| *self.state(p));
        *self.state(t) = Burst {
            burst_time: 0,
            ..inherited
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry entry lists BORE's defaults for the knobs it changes
    /// and CFS's for the rest.
    #[test]
    fn tunables_carry_bore_defaults() {
        let d = |n: &str| TUNABLES.iter().find(|t| t.name == n).map(|t| t.default);
        assert_eq!(d("latency_ns"), Some(12_800_000));
        assert_eq!(d("wakeup_granularity_ns"), Some(4_800_000));
        assert_eq!(d("tunable_scaling"), Some(0));
        assert_eq!(d("gentle_fair_sleepers"), Some(0));
        assert_eq!(d("start_debit"), Some(1));
        assert_eq!(d("burst_penalty_scale"), Some(1256));
    }

    /// `sysctl_tweak=0` restores CFS's defaults but keeps explicit values.
    #[test]
    fn without_sysctl_tweak_takes_cfs_defaults() {
        let specs: Vec<&Tunable> = TUNABLES.iter().collect();
        let set = |o: &[(&str, i64)]| {
            let o: Vec<(String, i64)> = o.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            untweaked(&TunableSet::resolve(&specs, &o, "test").expect("valid"))
        };
        let t = set(&[("sysctl_tweak", 0), ("min_granularity_ns", 2_000_000)]);
        assert_eq!(t.get("latency_ns"), Some(6_000_000));
        assert_eq!(t.get("wakeup_granularity_ns"), Some(1_000_000));
        assert_eq!(t.get("tunable_scaling"), Some(1));
        assert_eq!(t.get("min_granularity_ns"), Some(2_000_000));
        assert_eq!(t.get("gentle_fair_sleepers"), Some(0));
        assert_eq!(set(&[]).get("latency_ns"), Some(12_800_000));
    }
}
