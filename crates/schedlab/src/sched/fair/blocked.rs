//! The leaf cfs_rq list and the decay of blocked load (fair.c, 6.12): a CPU's cfs_rqs that
//! hold load, util or runnable go on its leaf list when they get an entity
//! (`list_add_leaf_cfs_rq`); `sched_balance_update_blocked_averages` (6.1:
//! `update_blocked_averages`) decays each, children first, passes the change to the group
//! entity above, and drops those fully decayed. It runs before a periodic or newly idle
//! balance and, for idle CPUs, from the NOHZ idle balance (`update_nohz_stats`), so an idle
//! CPU's signals fall as on a real machine rather than at its next update. Only the cfs_rqs
//! with something left to decay are visited: 10,000 empty groups cost nothing here.

use super::load_avg::{update_cfs_rq_load_avg, update_load_avg, UPDATE_TG};
use super::sched_class::{fair, level_of};
use super::CfsRqId;
use crate::sched::class::{Class, Env};
use crate::sched::hooks::Hooks;
use crate::sched::ops::Op;
use crate::sched::rq::{Rq, RqAvg};
use crate::sched::Sched;

/// The cfs_rq of `q`'s parent group on this CPU (none for the root).
fn parent_cfs_rq(env: &Env, q: CfsRqId) -> Option<CfsRqId> {
    let tg = &env.tgs[env.cfs_rqs[q as usize].tg as usize];
    tg.parent.map(|p| env.tgs[p as usize].cfs_rq(env.hooks.cpu))
}

/// `list_add_leaf_cfs_rq`.
pub(super) fn list_add_leaf_cfs_rq(rq: &mut Rq, env: &mut Env, q: CfsRqId) {
    if std::mem::replace(&mut env.cfs_rqs[q as usize].on_list, true) {
        return;
    }
    rq.leaf_cfs_rq_list.push(q);
    if let Some(p) = parent_cfs_rq(env, q) {
        env.cfs_rqs[p as usize].children_on_list += 1;
    }
}

/// `list_del_leaf_cfs_rq`.
pub(super) fn list_del_leaf_cfs_rq(rq: &mut Rq, env: &mut Env, q: CfsRqId) {
    if env.cfs_rqs[q as usize].on_list {
        rq.leaf_cfs_rq_list.retain(|&c| c != q);
        unlist(env, q);
    }
}

/// A cfs_rq taken off the list: its parent has one child fewer on it.
fn unlist(env: &mut Env, q: CfsRqId) {
    env.cfs_rqs[q as usize].on_list = false;
    if let Some(p) = parent_cfs_rq(env, q) {
        env.cfs_rqs[p as usize].children_on_list -= 1;
    }
}

/// `cfs_rq_is_decayed`: no weight, no sums, no child left on the list.
pub(super) fn cfs_rq_is_decayed(env: &Env, q: CfsRqId) -> bool {
    let c = &env.cfs_rqs[q as usize];
    let a = &c.avg;
    c.load.weight == 0
        && a.load_sum == 0
        && a.util_sum == 0
        && a.runnable_sum == 0
        && c.children_on_list == 0
}

/// `__update_blocked_fair`: decay every cfs_rq on the list, children first (a child group
/// is created after its parent: a higher id); true when nothing is left to decay.
fn update_blocked_fair(rq: &mut Rq, env: &mut Env) -> bool {
    let mut list = std::mem::take(&mut rq.leaf_cfs_rq_list);
    list.sort_unstable_by(|a, b| b.cmp(a));
    let mut done = true;
    list.retain(|&q| {
        env.ops.add(env.hooks.cpu, Op::BlockedUpdate, 1);
        fair(rq, env, q, |f| {
            if update_cfs_rq_load_avg(f, f.cfs_rq_clock_pelt()) {
                f.note_pelt_cfs();
                f.update_tg_load_avg();
                f.cfs_rq_util_change();
            }
        });
        // Pending changes go to the group entity unless it has nothing left
        // (`skip_blocked_update`).
        let c = &env.cfs_rqs[q as usize];
        if let Some(se) = env.tgs[c.tg as usize].se(env.hooks.cpu) {
            let a = env.ses[se as usize].avg;
            if a.load_avg != 0 || a.util_avg != 0 || c.propagate {
                let pq = level_of(env, se).0;
                fair(rq, env, pq, |f| update_load_avg(f, se, UPDATE_TG));
            }
        }
        let c = &env.cfs_rqs[q as usize];
        if c.avg.load_avg != 0 || c.avg.util_avg != 0 {
            done = false; // cfs_rq_has_blocked
        }
        let decayed = cfs_rq_is_decayed(env, q);
        if decayed {
            unlist(env, q);
        }
        !decayed
    });
    rq.leaf_cfs_rq_list = list;
    done
}

impl Sched {
    /// `sched_balance_update_blocked_averages`: the RT and deadline signals and every
    /// cfs_rq on the leaf list decay to now; the CPU keeps `has_blocked_load` while any is
    /// not zero yet.
    pub(crate) fn sched_balance_update_blocked_averages<H: Hooks>(
        &mut self,
        cpu: usize,
        h: &mut H,
    ) {
        self.update_rq_clock(cpu, h.now());
        let curr = self.rqs[cpu].curr.map(|p| self.class(p));
        self.update_rq_avg(cpu, RqAvg::Rt, curr == Some(Class::Rt), h);
        self.update_rq_avg(cpu, RqAvg::Dl, curr == Some(Class::Deadline), h);
        self.rqs[cpu].update_hw_avg();
        let rq = &self.rqs[cpu];
        let others = rq.avg_rt.util_avg != 0 || rq.avg_dl.util_avg != 0 || rq.avg_hw.load_avg != 0;
        let done = self.on_rq(cpu, h, update_blocked_fair);
        let rq = &mut self.rqs[cpu];
        rq.last_blocked_load_update_tick = h.now() / self.tun.tick_ns;
        if done && !others {
            rq.has_blocked_load = false;
        }
    }

    /// `update_nohz_stats`: an idle CPU's blocked load decays, at most once a jiffy; true
    /// while it has some.
    pub(crate) fn update_nohz_stats<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        let rq = &self.rqs[cpu];
        if !rq.has_blocked_load {
            return false;
        }
        if h.now() / self.tun.tick_ns <= rq.last_blocked_load_update_tick {
            return true;
        }
        self.sched_balance_update_blocked_averages(cpu, h);
        self.rqs[cpu].has_blocked_load
    }
}
