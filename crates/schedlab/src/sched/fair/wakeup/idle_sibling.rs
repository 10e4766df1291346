//! `select_idle_sibling` (fair.c, 6.12): from the target `wake_affine` chose, find an idle
//! CPU sharing its cache: the target or prev if idle, the task's recent CPU, an idle CPU
//! that fits on an asymmetric machine (`select_idle_capacity`), an idle SMT sibling of prev
//! (`select_idle_smt`), or a scan of the LLC bounded by SIS_UTIL, looking for a wholly idle
//! core while one is known to exist (`select_idle_cpu`, `select_idle_core`). 6.1 neither
//! scans the target's cluster first nor keeps prev and recent only within it
//! (`fair.wake_cluster=off`).
//! Simplified: schedlab's threads are all user threads, so the rule letting a per-CPU
//! kthread (an IO completion) stack its wakee on its own CPU never applies and is left out.

use super::PrevIdleBias;
use crate::sched::class::Placement;
use crate::sched::explain::About;
use crate::sched::fair::capacity::{capacity_less_avg_pressure, task_util_est, util_fits_cpu};
use crate::sched::features::Feat;
use crate::sched::topology::SD_CLUSTER;
use crate::sched::uapi::Policy;
use crate::sched::uclamp::{UCLAMP_MAX, UCLAMP_MIN};
use crate::sched::Sched;
use smallvec::smallvec;

/// The task's utilization and clamps, for the capacity checks of an asymmetric machine.
#[derive(Clone, Copy)]
struct Fit {
    util: u64,
    min: u64,
    max: u64,
}

impl Sched {
    /// `select_idle_sibling(p, prev, target)` for a wakeup on CPU `this`.
    pub(super) fn select_idle_sibling(
        &mut self,
        p: u32,
        prev: usize,
        target: usize,
        this: usize,
    ) -> (usize, Placement) {
        // The task's utilization: on asymmetric machines, and for UTIL_FITS_CAPACITY.
        let bias_util = self.feat.has(Feat::WakeupBiasPrevIdle)
            && self.feat.prev_idle_bias == PrevIdleBias::UtilFitsCapacity;
        let fit = (self.asym || bias_util).then(|| self.task_fit(p));
        let fits = |s: &Sched, cpu: usize| !s.asym || fit.is_some_and(|f| s.fits(f, cpu));
        let task_util = fit.map_or(0, |f| f.util);
        self.note("select_idle_sibling", || {
            let recent = self.tasks[p as usize].recent_used_cpu;
            let values = smallvec![
                ("target", target as i64),
                ("prev", prev as i64),
                ("recent_used_cpu", recent as i64),
                ("target_idle", self.idle_cpu(target) as i64),
                ("prev_idle", self.idle_cpu(prev) as i64),
                ("recent_idle", self.idle_cpu(recent) as i64),
            ];
            (About::Subject, values)
        });
        let at_target = if target == prev {
            Placement::Prev
        } else {
            Placement::Affine
        };
        if self.idle_or_sched_idle(target) && fits(self, target) {
            return (target, at_target);
        }
        let bias_target = (prev == target && self.almost_idle_cpu(target, p, this))
            || self.fits_remaining_capacity(task_util, target);
        if bias_target && fits(self, target) {
            return (target, Placement::Bias);
        }
        let cluster = self.feat.wake_cluster && self.topo.cluster_active;
        let near = |s: &Sched, cpu: usize| !cluster || s.topo.share_resources(cpu, target);
        let mut prev_aff = None;
        if prev != target && self.topo.share_cache(prev, target) && fits(self, prev) {
            let how = if self.idle_or_sched_idle(prev) {
                Some(Placement::Prev)
            } else if self.almost_idle_cpu(prev, p, this)
                || self.fits_remaining_capacity(task_util, prev)
            {
                Some(Placement::Bias)
            } else {
                None
            };
            if let Some(how) = how {
                if near(self, prev) {
                    return (prev, how);
                }
                prev_aff = Some((prev, how));
            }
        }
        let recent = std::mem::replace(&mut self.tasks[p as usize].recent_used_cpu, prev);
        let recent = (recent != prev
            && recent != target
            && self.topo.share_cache(recent, target)
            && (self.idle_or_sched_idle(recent)
                || self.fits_remaining_capacity(task_util, recent))
            && self.tasks[p as usize].cpus_mask[recent]
            && fits(self, recent))
        .then_some(recent);
        if let Some(r) = recent.filter(|&r| near(self, r)) {
            return (r, Placement::Recent);
        }
        if let (Some(level), Some(f)) = (self.topo.cache[target].asym_cpucapacity, fit) {
            if self.asym {
                let found = self.select_idle_capacity(p, f, level, target);
                return found.map_or((target, at_target), |c| (c, Placement::IdleSibling));
            }
        }
        let Some(llc) = self.topo.cache[target].llc else {
            return (target, at_target);
        };
        let mut has_idle_core = false;
        if self.topo.smt_active {
            has_idle_core = self.topo.llc_shared(target).has_idle_cores.get();
            if !has_idle_core && self.topo.share_cache(prev, target) {
                if let Some(c) = self.select_idle_smt(p, llc, target, prev) {
                    return (c, Placement::IdleSibling);
                }
            }
        }
        if let Some(c) = self.select_idle_cpu(p, llc, has_idle_core, target) {
            return (c, Placement::IdleSibling);
        }
        // With clusters, prev or recent outside the target's cluster beat no idle CPU.
        if let Some(found) = prev_aff {
            return found;
        }
        if let Some(r) = recent {
            return (r, Placement::Recent);
        }
        (target, at_target)
    }

    /// The task's `task_util_est` (decayed to now: `sync_entity_load_avg`) and effective
    /// clamps.
    fn task_fit(&mut self, p: u32) -> Fit {
        self.sync_entity_load_avg(p);
        let t = &self.tasks[p as usize];
        Fit {
            util: task_util_est(&self.ses[t.se as usize]),
            min: t.uclamp[UCLAMP_MIN].value as u64,
            max: t.uclamp[UCLAMP_MAX].value as u64,
        }
    }

    /// `util_fits_cpu` of the task's figures on `cpu`: 1 fits, −1 fits but for util_min, 0
    /// does not.
    fn fits_cpu(&self, f: Fit, cpu: usize) -> i32 {
        util_fits_cpu(f.util, f.min, f.max, &self.rqs[cpu], self.uclamp_used)
    }

    /// `asym_fits_cpu`: on an asymmetric machine, the task fits `cpu` fully.
    fn fits(&self, f: Fit, cpu: usize) -> bool {
        self.fits_cpu(f, cpu) > 0
    }

    /// `available_idle_cpu(cpu) || sched_idle_cpu(cpu)`.
    pub(super) fn idle_or_sched_idle(&self, cpu: usize) -> bool {
        self.idle_cpu(cpu) || self.sched_idle_cpu(cpu)
    }

    /// `sched_idle_cpu`: only SCHED_IDLE tasks (or tasks of idle groups) are queued.
    pub(crate) fn sched_idle_cpu(&self, cpu: usize) -> bool {
        let nr = self.nr_running(cpu);
        self.sched_idle_used
            && nr != 0
            && nr == self.cfs_rqs[cpu].h_nr_queued
            && (self.rqs[cpu].cfs_tasks.iter(&self.group_nodes)).all(|t| self.idle_entity(t))
    }

    /// The task is SCHED_IDLE or in an idle group (`idle_h_nr_running` counts it).
    fn idle_entity(&self, t: u32) -> bool {
        let t = &self.tasks[t as usize];
        t.policy == Policy::Idle || self.tgs[t.tg as usize].in_idle_group(&self.tgs)
    }

    /// `select_idle_capacity`: the first idle CPU of the asymmetric domain `level` (from
    /// `target` on) that fits the task; else the idle one fitting best (util_min misfits
    /// before misfits), then with the most capacity.
    fn select_idle_capacity(&self, p: u32, f: Fit, level: usize, target: usize) -> Option<usize> {
        let span = &self.topo.domains[target][level].span;
        let allowed = &self.tasks[p as usize].cpus_mask;
        let (mut best, mut best_fits, mut best_cap) = (None, 0, 0);
        for cpu in wrap(span, target).filter(|&c| allowed[c]) {
            if !self.idle_or_sched_idle(cpu) {
                continue;
            }
            let fits = self.fits_cpu(f, cpu);
            if fits > 0 {
                return Some(cpu);
            }
            let cap = match fits {
                0 => self.capacity_of(cpu),
                _ => capacity_less_avg_pressure(&self.rqs[cpu]),
            };
            if fits < best_fits || (fits == best_fits && cap > best_cap) {
                (best, best_fits, best_cap) = (Some(cpu), fits, cap);
            }
        }
        best
    }

    /// `select_idle_smt`: an idle SMT sibling of `prev` within `target`'s LLC.
    fn select_idle_smt(&self, p: u32, llc: usize, target: usize, prev: usize) -> Option<usize> {
        let span = &self.topo.domains[target][llc].span;
        let allowed = &self.tasks[p as usize].cpus_mask;
        (self.topo.cache[prev].smt.iter().copied()).find(|&c| {
            c != prev && allowed[c] && span.binary_search(&c).is_ok() && self.idle_or_sched_idle(c)
        })
    }

    /// `select_idle_cpu`: scan `target`'s LLC (its cluster first, with clusters) from the CPU
    /// after it for a wholly idle core while one is known to exist, else for an idle CPU,
    /// trying at most `nr_idle_scan` CPUs under SIS_UTIL. A core search that fails clears
    /// `has_idle_cores` and falls back on the first idle CPU it saw.
    fn select_idle_cpu(
        &mut self,
        p: u32,
        llc: usize,
        has_idle_core: bool,
        target: usize,
    ) -> Option<usize> {
        let mut s = Scan {
            nr: i64::MAX,
            idle_cpu: None,
            has_idle_core,
        };
        if self.feat.has(Feat::SisUtil) {
            s.nr = self.topo.llc_shared(target).nr_idle_scan.get() as i64 + 1;
            if s.nr == 1 {
                return None; // an overloaded LLC is unlikely to have an idle CPU
            }
        }
        let mut cpus = std::mem::take(&mut self.select_rq_mask);
        let sd = &self.topo.domains[target][llc];
        let allowed = &self.tasks[p as usize].cpus_mask;
        // The scan reads the mask only within this LLC (its cluster and SMT siblings too).
        sd.span.iter().for_each(|&c| cpus[c] = allowed[c]);
        let child_cluster = llc
            .checked_sub(1)
            .is_some_and(|c| self.topo.domains[target][c].flags & SD_CLUSTER != 0);
        let mut step = Step::Done;
        if self.feat.wake_cluster && self.topo.cluster_active && child_cluster {
            let cluster = &sd.groups[0];
            step = self.scan(&mut s, &mut cpus, cluster, target);
            if step == Step::Done {
                cluster.iter().for_each(|&c| cpus[c] = false);
            }
        }
        if step == Step::Done {
            step = self.scan(&mut s, &mut cpus, &sd.span, target);
        }
        let found = match step {
            Step::Found(cpu) => Some(cpu),
            Step::Exhausted => None,
            Step::Done => {
                if has_idle_core {
                    self.topo.llc_shared(target).has_idle_cores.set(false);
                }
                s.idle_cpu
            }
        };
        self.select_rq_mask = cpus;
        found
    }

    /// One loop of `select_idle_cpu` over `span` ∩ `cpus` from the CPU after `target`.
    fn scan(&self, s: &mut Scan, cpus: &mut [bool], span: &[usize], target: usize) -> Step {
        for cpu in wrap(span, target + 1) {
            if !cpus[cpu] {
                continue;
            }
            if s.has_idle_core {
                if let Some(core) = self.select_idle_core(cpu, cpus, &mut s.idle_cpu) {
                    return Step::Found(core);
                }
            } else {
                s.nr -= 1;
                if s.nr <= 0 {
                    return Step::Exhausted;
                }
                if self.idle_or_sched_idle(cpu) {
                    return Step::Found(cpu);
                }
            }
        }
        Step::Done
    }

    /// `select_idle_core`: `core`'s SMT siblings all idle gives `core`; meanwhile remember
    /// the first idle (or SCHED_IDLE-only) allowed CPU seen, and leave a busy core's
    /// siblings out of the rest of the scan.
    fn select_idle_core(
        &self,
        core: usize,
        cpus: &mut [bool],
        idle_cpu: &mut Option<usize>,
    ) -> Option<usize> {
        let mut idle = true;
        for &cpu in &self.topo.cache[core].smt {
            if !self.idle_cpu(cpu) {
                idle = false;
                if idle_cpu.is_none() {
                    if self.sched_idle_cpu(cpu) && cpus[cpu] {
                        *idle_cpu = Some(cpu);
                        break;
                    }
                    continue;
                }
                break;
            }
            if idle_cpu.is_none() && cpus[cpu] {
                *idle_cpu = Some(cpu);
            }
        }
        if idle {
            return Some(core);
        }
        self.topo.cache[core]
            .smt
            .iter()
            .for_each(|&c| cpus[c] = false);
        None
    }

    /// `__update_idle_core`: `cpu` goes idle; if all its SMT siblings are idle, its LLC has
    /// an idle core.
    pub(crate) fn update_idle_core(&self, cpu: usize) {
        if !self.topo.smt_active {
            return;
        }
        let shared = self.topo.llc_shared(cpu);
        if shared.has_idle_cores.get() {
            return;
        }
        let smt = &self.topo.cache[cpu].smt;
        if smt.iter().all(|&c| c == cpu || self.idle_cpu(c)) {
            shared.has_idle_cores.set(true);
        }
    }
}

/// How a loop of `select_idle_cpu` ended: with a CPU, out of budget, or at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Found(usize),
    Exhausted,
    Done,
}

/// The state of a `select_idle_cpu` scan: CPUs it may still try, the first idle CPU a core
/// search saw, whether it looks for whole cores.
struct Scan {
    nr: i64,
    idle_cpu: Option<usize>,
    has_idle_core: bool,
}

/// `for_each_cpu_wrap(cpu, span, start)`: the CPUs of the ascending `span` from the first at
/// or after `start`, wrapping round.
fn wrap(span: &[usize], start: usize) -> impl Iterator<Item = usize> + '_ {
    let at = span.partition_point(|&c| c < start);
    span[at..].iter().chain(&span[..at]).copied()
}
