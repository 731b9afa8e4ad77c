//! Group scheduling weights (`update_cfs_group`, `calc_group_shares`),
//! linux-cfs.md §8.
//!
//! A group's entity on a CPU gets the share of `tg->shares` that its queue's
//! load is of the group's load over all CPUs:
//! `shares = tg.shares × load / (tg.load_avg − contrib + load)`, with
//! `load = max(queue weight, queue PELT load_avg)`, clamped to
//! [MIN_SHARES, tg.shares]. `tg.load_avg` is the sum of per-CPU PELT
//! contributions, refreshed when one changes by more than 1/64
//! (`update_tg_load_avg`).

use super::entity::SeId;
use super::weights::MIN_SHARES;
use super::Fair;
use crate::machine::Machine;

impl Fair {
    /// `update_tg_load_avg` for the queue a group entity owns.
    fn update_tg_load_avg(&mut self, m: &Machine, q: usize) {
        self.rq_pelt(m, q);
        let g = self.cfs[q].group;
        let avg = self.cfs[q].pelt.avg() as i64;
        let delta = avg - self.cfs[q].tg_contrib;
        if delta.abs() > self.cfs[q].tg_contrib / 64 {
            self.tg[g].load_avg += delta;
            self.cfs[q].tg_contrib = avg;
        }
    }

    /// `calc_group_shares` for group entity `se`.
    pub(super) fn calc_group_shares(&mut self, m: &Machine, se: SeId) -> u64 {
        let Some(q) = self.se[se].my_q else {
            return self.se[se].w();
        };
        self.update_tg_load_avg(m, q);
        let g = self.cfs[q].group;
        let tg_shares = m.groups[g].shares;
        let load = self.cfs[q].load.max(self.cfs[q].pelt.avg()) as i64;
        let tg_weight = self.tg[g].load_avg - self.cfs[q].tg_contrib + load;
        let shares = if tg_weight > 0 {
            (tg_shares as i128 * load as i128 / tg_weight as i128) as u64
        } else {
            tg_shares
        };
        shares.clamp(MIN_SHARES, tg_shares)
    }

    /// `update_cfs_group`: recompute and apply a group entity's weight.
    pub(super) fn update_cfs_group(&mut self, m: &mut Machine, se: SeId) {
        if self.se[se].my_q.is_none() {
            return;
        }
        let shares = self.calc_group_shares(m, se);
        self.reweight_entity(m, se, shares);
    }
}
