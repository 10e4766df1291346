//! `reweight_entity`: an entity takes a new load weight (a nice change, a group's share), keeping its
//! place: under EEVDF its lag and remaining virtual slice are rescaled (`reweight_eevdf`,
//! 6.12); under CFS (6.1) vruntime is left as it is. Under 7.x's flat runqueue only its load
//! changes here: a task's EEVDF weight is its share, set on the root (`flat.rs`).

use super::load_avg::{dequeue_load_avg, enqueue_load_avg};
use super::{eevdf, Fair, SeId};
use crate::sched::pelt::get_pelt_divider;
use crate::sched::weight::LoadWeight;

impl Fair<'_, '_> {
    /// `reweight_entity`: a task's new nice (`reweight_task_fair`) or a group's new share.
    pub fn reweight_entity(&mut self, id: SeId, lw: LoadWeight) {
        let flat = self.flat();
        let curr = self.cfs.curr == Some(id);
        let on_rq = self.ses[id as usize].on_rq;
        let eevdf = self.is_eevdf() && !flat;
        let tree = on_rq && !curr && !flat;
        let mut avruntime = 0;
        if on_rq {
            if eevdf || (curr && !flat) {
                self.update_curr();
            }
            if eevdf {
                avruntime = eevdf::avg_vruntime(self);
            }
            if tree {
                self.dequeue_tree(id);
            }
            self.cfs.load.sub(self.ses[id as usize].load.weight);
        }
        dequeue_load_avg(self, id);
        if eevdf && on_rq {
            eevdf::reweight_eevdf(self, id, avruntime, lw.weight);
        }
        let se = &mut self.ses[id as usize];
        if eevdf && !on_rq {
            // vlag is V − v while the lag is w·(V − v): keep the lag.
            se.vlag = se.vlag.wrapping_mul(se.load.weight as i64) / lw.weight as i64;
        }
        se.load = lw;
        se.avg.load_avg = se.weight() * se.avg.load_sum / get_pelt_divider(&se.avg) as u64;
        enqueue_load_avg(self, id);
        if on_rq {
            self.cfs.load.add(lw.weight);
            if tree {
                self.enqueue_tree(id);
            }
        }
    }
}
