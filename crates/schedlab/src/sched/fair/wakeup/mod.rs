//! Where a waking or new fair task runs (fair.c, 6.12; 6.1 where it differs):
//! `select_task_rq_fair` with its waker/wakee heuristics (`record_wakee`, `wake_wide`), the
//! choice between the waker's and the previous CPU (`wake_affine`), the search for an idle
//! CPU near the target (`idle_sibling.rs`), energy-aware placement (`energy.rs`), the fork
//! slow path (`find_dst.rs`), and the unmerged almost-idle bias of seed 002 (`bias.rs`).

mod bias;
mod energy;
mod find_dst;
mod idle_sibling;

pub use bias::PrevIdleBias;

use crate::sched::class::{Class, Placement, Wake};
use crate::sched::explain::About;
use crate::sched::features::Feat;
use crate::sched::flags::{WF_CURRENT_CPU, WF_SYNC, WF_TTWU};
use crate::sched::topology::SD_WAKE_AFFINE;
use crate::sched::Sched;
use crate::time::Ns;
use smallvec::smallvec;

/// A waker's record of whom it wakes (`wakee_flips`, `wakee_flip_decay_ts` in jiffies,
/// `last_wakee`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Wakee {
    pub flips: u32,
    pub decay_ts: u64,
    pub last: Option<u32>,
}

impl Sched {
    /// `select_task_rq_fair`: a wakeup goes to the waker's or the previous CPU as
    /// `wake_affine` decides, then to an idle CPU near it; a fork takes the slow path down
    /// the domains that balance forks.
    pub(crate) fn select_task_rq_fair(
        &mut self,
        p: u32,
        prev: usize,
        w: Wake,
    ) -> (usize, Placement) {
        let this = w.cpu;
        let sync = w.flags & WF_SYNC != 0;
        let sd_flag = w.flags & 0xf; // the SD_BALANCE_* flag of this kind of placement
        let this_allowed = self.tasks[p as usize].cpus_mask[this];
        let mut want_affine = false;
        if w.flags & WF_TTWU != 0 {
            self.record_wakee(p, this, w.now);
            if w.flags & WF_CURRENT_CPU != 0 && this_allowed {
                return (this, Placement::CurrentCpu);
            }
            if !self.is_rd_overutilized() {
                if let Some(cpu) = self.find_energy_efficient_cpu(p, this, prev) {
                    return (cpu, Placement::Eas);
                }
            }
            want_affine = !self.wake_wide(p, this) && this_allowed;
        }
        let mut new = prev;
        let mut slow = None;
        for level in 0..self.topo.domains[this].len() {
            let sd = &self.topo.domains[this][level];
            if want_affine && sd.flags & SD_WAKE_AFFINE != 0 && sd.span.binary_search(&prev).is_ok()
            {
                if this != prev {
                    new = self.wake_affine(level, p, this, prev, sync);
                }
                slow = None; // wake_affine rather than the balance flags
                break;
            }
            if sd.flags & sd_flag != 0 {
                slow = Some(level);
            } else if !want_affine {
                break;
            }
        }
        if let Some(level) = slow {
            let cpu = self.sched_balance_find_dst_cpu(level, p, this, prev, sd_flag);
            return (cpu, Placement::SlowPath);
        }
        if w.flags & WF_TTWU != 0 {
            return self.select_idle_sibling(p, prev, new, this);
        }
        (new, Placement::Prev)
    }

    /// The task running on `cpu` (`current`), or its idle task's record.
    fn current_wakee(&mut self, cpu: usize) -> &mut Wakee {
        match self.rqs[cpu].curr {
            Some(c) => &mut self.tasks[c as usize].wakee,
            None => &mut self.rqs[cpu].idle_wakee,
        }
    }

    /// `record_wakee`: the waker on `cpu` counts a flip each time it wakes another task than
    /// last time, halving the count once a second.
    fn record_wakee(&mut self, p: u32, cpu: usize, now: Ns) {
        let (jiffies, hz) = (now / self.tun.tick_ns, self.feat.hz as u64);
        let w = self.current_wakee(cpu);
        if jiffies > w.decay_ts + hz {
            w.flips >>= 1;
            w.decay_ts = jiffies;
        }
        if w.last != Some(p) {
            w.last = Some(p);
            w.flips = w.flips.saturating_add(1);
        }
    }

    /// `wake_wide`: waker and wakee both switch partners often (one at least `sd_llc_size`
    /// times, the other that many times more): many-to-many, so spread rather than pull.
    fn wake_wide(&mut self, p: u32, cpu: usize) -> bool {
        let factor = self.topo.cache[cpu].llc_size;
        let waker = self.current_wakee(cpu).flips;
        let wakee = self.tasks[p as usize].wakee.flips;
        let (master, slave) = (waker.max(wakee), waker.min(wakee));
        slave >= factor && master as u64 >= slave as u64 * factor as u64
    }

    /// `wake_affine`: the waker's CPU `this` if WA_IDLE or WA_WEIGHT prefer it, else `prev`.
    fn wake_affine(&mut self, level: usize, p: u32, this: usize, prev: usize, sync: bool) -> usize {
        let mut target = None;
        if self.feat.has(Feat::WaIdle) {
            target = self.wake_affine_idle(p, this, prev, sync);
        }
        if self.feat.has(Feat::WaWeight) && target.is_none() {
            target = self.wake_affine_weight(level, p, this, prev, sync);
        }
        if target != Some(this) {
            return prev;
        }
        self.topo.domains[this][level].stats.ttwu_move_affine += 1;
        this
    }

    /// `wake_affine_idle`: an idle waker's CPU sharing the cache takes the task unless prev
    /// is idle too; a sync wakeup from a CPU running only the waker takes it; an idle prev
    /// keeps it. (`WAKEUP_BIAS_PREV_IDLE` counts an almost idle prev as idle.)
    fn wake_affine_idle(&mut self, p: u32, this: usize, prev: usize, sync: bool) -> Option<usize> {
        if self.idle_cpu(this) && self.topo.share_cache(this, prev) {
            let prev_idle = self.idle_cpu(prev) || self.almost_idle_cpu(prev, p, this);
            return Some(if prev_idle { prev } else { this });
        }
        // 6.12 leaves delayed tasks out (6.1 has none: the difference is zero there).
        let cfs = &self.cfs_rqs[this];
        let delayed = cfs.h_nr_queued - cfs.h_nr_runnable;
        if sync && self.nr_running(this) - delayed == 1 {
            return Some(this);
        }
        (self.idle_cpu(prev) || self.almost_idle_cpu(prev, p, this)).then_some(prev)
    }

    /// `wake_affine_weight`: `this` if its load with the task, less the sync waker's, is
    /// below prev's without it, by capacity (prev's load weighed up by half the domain's
    /// imbalance_pct margin with WA_BIAS). Simplified: a current task that is not fair adds
    /// no load to remove.
    fn wake_affine_weight(
        &mut self,
        level: usize,
        p: u32,
        this: usize,
        prev: usize,
        sync: bool,
    ) -> Option<usize> {
        let mut this_eff = self.cpu_load(this) as i64;
        if sync {
            let current = self.rqs[this]
                .curr
                .filter(|&c| self.class(c) == Class::Fair);
            let current_load = current.map_or(0, |c| self.task_h_load(c, this)) as i64;
            if current_load > this_eff {
                self.note("wake_affine_weight", || {
                    (
                        About::Subject,
                        smallvec![("this_load", this_eff), ("current_load", current_load)],
                    )
                });
                return Some(this);
            }
            this_eff -= current_load;
        }
        let task_load = self.task_h_load(p, this) as i64;
        let bias = self.feat.has(Feat::WaBias);
        let pct = self.topo.domains[this][level].imbalance_pct as i64;
        this_eff += task_load;
        if bias {
            this_eff *= 100;
        }
        this_eff *= self.capacity_of(prev) as i64;
        let mut prev_eff = self.cpu_load(prev) as i64 - task_load;
        if bias {
            prev_eff *= 100 + (pct - 100) / 2;
        }
        prev_eff *= self.capacity_of(this) as i64;
        // A tie goes to prev, except for a sync wakeup: select_idle_sibling may then stack
        // the wakee on the waker when nothing else is idle.
        if sync {
            prev_eff += 1;
        }
        self.note("wake_affine_weight", || {
            let values = smallvec![
                ("this_cpu", this as i64),
                ("prev_cpu", prev as i64),
                ("task_load", task_load),
                ("this_eff_load", this_eff),
                ("prev_eff_load", prev_eff),
            ];
            (About::Subject, values)
        });
        (this_eff < prev_eff).then_some(this)
    }

    /// `cpu_load`: the root cfs_rq's load_avg.
    pub(crate) fn cpu_load(&self, cpu: usize) -> u64 {
        self.cfs_rqs[cpu].avg.load_avg
    }

    /// `capacity_of`: what RT, deadline and IRQ time leave of the CPU to fair tasks.
    pub(crate) fn capacity_of(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_capacity
    }

    /// `cpu_load_without(rq, p)`: `cpu`'s load without task `p`'s share, if it has one there
    /// (its h_load, computed by CPU `by`).
    pub(crate) fn cpu_load_without(&mut self, cpu: usize, p: u32, by: usize) -> u64 {
        if !self.contributes(cpu, p) {
            return self.cpu_load(cpu);
        }
        let h_load = self.task_h_load(p, by);
        self.cpu_load(cpu).saturating_sub(h_load)
    }

    /// Task `p` is attached to `cpu`'s averages: its CPU, with a PELT update behind it (not
    /// a new task).
    fn contributes(&self, cpu: usize, p: u32) -> bool {
        let t = &self.tasks[p as usize];
        t.cpu == cpu && self.ses[t.se as usize].avg.last_update_time != 0
    }

    /// `sync_entity_load_avg`: decay a sleeping task's averages to its cfs_rq's last update.
    fn sync_entity_load_avg(&mut self, p: u32) {
        let (se, cpu) = (self.tasks[p as usize].se, self.tasks[p as usize].cpu);
        let q = self.ses[se as usize].cfs_rq;
        let last = self.cfs_rqs[q as usize].avg.last_update_time;
        let scale = self.rqs[cpu].clock.contrib_scale();
        super::load_avg::sync_entity_load_avg(&mut self.ses[se as usize], last, scale);
    }
}

#[cfg(test)]
mod tests;
