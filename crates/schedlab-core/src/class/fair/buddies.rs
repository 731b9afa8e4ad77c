//! CFS buddies (linux-cfs.md §7): the next, last and skip hints kept per
//! queue and the walks that set and clear them up the hierarchy. A
//! queue-ordering policy may compile them out (order.rs).

use super::entity::{CfsRq, RqId, SeId};
use super::Fair;

impl Fair {
    /// `clear_buddies`: forget `se` as next/last/skip buddy, walking up
    /// while the parent queue points at the parent entity.
    pub(super) fn clear_buddies(&mut self, rq: RqId, se: SeId) {
        for which in 0..3 {
            if Self::buddy(&mut self.cfs[rq], which).as_ref() != Some(&se) {
                continue;
            }
            let mut s = Some(se);
            while let Some(x) = s {
                let q = self.se[x].cfs_rq;
                let b = Self::buddy(&mut self.cfs[q], which);
                if *b != Some(x) {
                    break;
                }
                *b = None;
                s = self.se[x].parent;
            }
        }
    }

    fn buddy(rq: &mut CfsRq, which: usize) -> &mut Option<SeId> {
        match which {
            0 => &mut rq.next,
            1 => &mut rq.last,
            _ => &mut rq.skip,
        }
    }

    pub(super) fn set_buddy(&mut self, se: SeId, which: usize) {
        if !self.buddies_enabled() {
            return;
        }
        let mut s = Some(se);
        while let Some(x) = s {
            if which < 2 && (!self.se[x].on_rq || self.se[x].idle) {
                return;
            }
            let q = self.se[x].cfs_rq;
            *Self::buddy(&mut self.cfs[q], which) = Some(x);
            s = self.se[x].parent;
        }
    }

    /// `set_next_buddy`.
    pub fn set_next_buddy(&mut self, se: SeId) {
        self.set_buddy(se, 0);
    }
}
