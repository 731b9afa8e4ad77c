//! The fair class's internal invariants, checked by tests between steps
//! (`SchedClass::check_invariants`): queue loads and EEVDF's sums match
//! their entities, the weighted lag sums to zero, per-CPU task counts
//! agree, a queue-ordering policy's lists hold the tree's entities by
//! `list_seq`, and queued entities keep the vruntime and slice they were
//! queued with (the timeline's per-chunk bounds).

use super::{eevdf, tunables::Version, Fair};
use crate::machine::Machine;

impl Fair {
    pub(super) fn invariants(&self, m: &Machine) -> Result<(), String> {
        for (i, q) in self.cfs.iter().enumerate() {
            let mut load = 0;
            let (mut vsum, mut wsum) = (0i128, 0u64);
            // The slices kept per chunk are counted from the entities' own:
            // a slice changed while queued shows as a stale count.
            if !q.tree.check_aug(|s| self.se[s].slice) {
                return Err(format!("rq {i}: a timeline chunk's kept bounds are stale"));
            }
            // Without the timeline (CacULE) the list is the queue.
            let queued: Vec<(usize, i64)> = match self.timeline {
                true => q.tree.iter_kept().collect(),
                false => q
                    .list
                    .iter()
                    .map(|x| (x.se, self.se[x.se].vruntime))
                    .collect(),
            };
            if !self.timeline && q.tree.iter().next().is_some() {
                return Err(format!("rq {i}: a timeline kept without CFS's timeline"));
            }
            for (s, queued_v) in queued {
                let e = &self.se[s];
                if !e.on_rq || e.cfs_rq != i {
                    return Err(format!("rq {i}: entity {s} in tree but not queued here"));
                }
                if queued_v != e.vruntime {
                    return Err(format!(
                        "rq {i}: entity {s}'s vruntime changed while queued"
                    ));
                }
                load += e.w();
                vsum += e.vruntime as i128 * e.w() as i128;
                wsum += e.w();
            }
            if let Some(c) = q.curr.filter(|c| self.se[*c].on_rq) {
                load += self.se[c].w();
            }
            if self.ordered {
                // The list holds the queued entities (the tree's, where it
                // is kept) by list_seq, each entry as its entity says.
                let want: Vec<_> = match self.timeline {
                    true => {
                        let mut v: Vec<_> = q.tree.iter().collect();
                        v.sort_unstable_by_key(|s| self.se[*s].list_seq);
                        v
                    }
                    false => q.list.iter().map(|x| x.se).collect(),
                };
                let list: Vec<_> = q.list.iter().map(|x| x.se).collect();
                let stale = q.list.iter().any(|x| {
                    let e = &self.se[x.se];
                    (x.seq, x.task) != (e.list_seq, e.task) || q.curr == Some(x.se)
                });
                let sorted = q
                    .list
                    .iter()
                    .zip(q.list.iter().skip(1))
                    .all(|(a, b)| a.seq < b.seq);
                if want != list || stale || !sorted {
                    return Err(format!(
                        "rq {i}: list {:?} but tree by list_seq {want:?}",
                        q.list
                    ));
                }
            }
            if load != q.load {
                return Err(format!(
                    "rq {i}: load {} but entities sum to {load}",
                    q.load
                ));
            }
            if self.p.version == Version::Eevdf {
                if (vsum, wsum) != (q.avg_vsum, q.avg_load) {
                    return Err(format!("rq {i}: avg_vruntime sums drifted"));
                }
                // Σ w·(V − v) over the queue (curr included) is 0 up to V's rounding.
                let (sum, w) = self.avg_sums(i);
                if w > 0 {
                    let v = eevdf::floor_div(sum, w);
                    let lag = v * w - sum;
                    if lag > 0 || -lag >= w {
                        return Err(format!("rq {i}: weighted lag sum {lag} outside (-{w}, 0]"));
                    }
                }
            }
        }
        for cpu in 0..m.nr_cpus() {
            let h = self.root_rq(cpu).h_nr_running as usize;
            if h != self.cpu_tasks[cpu].len() {
                return Err(format!(
                    "cpu {cpu}: h_nr_running {h} but {} fair tasks",
                    self.cpu_tasks[cpu].len()
                ));
            }
        }
        Ok(())
    }
}
