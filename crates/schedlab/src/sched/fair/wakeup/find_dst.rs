//! The slow path of a fork (fair.c, 6.12's `sched_balance_find_dst_*`, 6.1's
//! `find_idlest_*`): from the highest domain that balances forks down, the idlest group
//! (its statistics without the task, `update_sg_wakeup_stats`), then its idlest CPU.
//! Simplified: no NUMA balancing preferred node, no core scheduling cookies; an idle CPU is
//! taken to sit in its platform's shallowest idle state (none without cpuidle states).

use crate::sched::fair::balance::stats::{
    adjust_numa_imbalance, group_classify, GroupType, SgLbStats,
};
use crate::sched::fair::capacity::task_fits_cpu;
use crate::sched::pelt::SCHED_CAPACITY_SCALE;
use crate::sched::topology::{SchedGroup, SD_ASYM_CPUCAPACITY, SD_BALANCE_FORK, SD_NUMA};
use crate::sched::Sched;

impl Sched {
    /// `sched_balance_find_dst_cpu`: descend from `this`'s domain `level`, each time into the
    /// idlest group's idlest CPU, to the CPU the new task starts on.
    pub(super) fn sched_balance_find_dst_cpu(
        &mut self,
        level: usize,
        p: u32,
        this: usize,
        prev: usize,
        sd_flag: u32,
    ) -> usize {
        let allowed = &self.tasks[p as usize].cpus_mask;
        if !self.topo.domains[this][level]
            .span
            .iter()
            .any(|&c| allowed[c])
        {
            return prev;
        }
        if sd_flag & SD_BALANCE_FORK == 0 {
            self.sync_entity_load_avg(p);
        }
        let (mut cpu, mut new) = (this, this);
        let mut sd = Some(level);
        while let Some(l) = sd {
            let child = l.checked_sub(1);
            if self.topo.domains[cpu][l].flags & sd_flag == 0 {
                sd = child;
                continue;
            }
            let Some(group) = self.sched_balance_find_dst_group(cpu, l, p) else {
                sd = child;
                continue;
            };
            new = self.sched_balance_find_dst_group_cpu(cpu, l, group, p);
            if new == cpu {
                sd = child; // balance a lower domain of `cpu`
                continue;
            }
            // Balance the domains of `new` below the size of this one.
            let weight = self.topo.domains[cpu][l].span.len();
            cpu = new;
            sd = (self.topo.domains[cpu].iter().enumerate())
                .take_while(|(_, d)| weight > d.span.len())
                .filter(|(_, d)| d.flags & sd_flag != 0)
                .map(|(l, _)| l)
                .last();
        }
        new
    }

    /// `update_sg_wakeup_stats` of group `span` of `cpu`'s domain `level`, over the CPUs
    /// `p` may use: the group as if `p` were not in it.
    fn update_sg_wakeup_stats(
        &mut self,
        cpu: usize,
        level: usize,
        span: &SchedGroup,
        p: u32,
    ) -> SgLbStats {
        let sd = &self.topo.domains[cpu][level];
        let (flags, pct) = (sd.flags, sd.imbalance_pct as u64);
        let info = self.lb_group_info(cpu, level, span);
        let mut sgs = SgLbStats {
            group_misfit_task_load: (flags & SD_ASYM_CPUCAPACITY != 0) as u64,
            ..SgLbStats::default()
        };
        for &i in span.iter() {
            if !self.tasks[p as usize].cpus_mask[i] {
                continue;
            }
            sgs.group_load += self.cpu_load_without(i, p, cpu);
            sgs.group_util += self.cpu_util_without(i, p);
            sgs.group_runnable += self.cpu_runnable_without(i, p);
            let local = self.task_running_on_cpu(i, p) as u32;
            sgs.sum_h_nr_running += self.lb_h_nr_running(i) - local;
            let nr_running = self.nr_running(i) - local;
            sgs.sum_nr_running += nr_running;
            let curr = self.rqs[i].curr;
            if nr_running == 0 && (curr.is_none() || curr == Some(p)) {
                sgs.idle_cpus += 1; // idle_cpu_without
            }
            if sgs.group_misfit_task_load != 0 && flags & SD_ASYM_CPUCAPACITY != 0 {
                let t = &self.tasks[p as usize];
                if task_fits_cpu(t, &self.ses[t.se as usize], &self.rqs[i], self.uclamp_used) {
                    sgs.group_misfit_task_load = 0;
                }
            }
        }
        sgs.group_capacity = info.capacity;
        sgs.group_weight = info.weight;
        sgs.group_type = group_classify(pct, info.imbalance, &sgs);
        if matches!(sgs.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
        }
        sgs
    }

    /// `task_running_on_cpu`: `p` is queued on `cpu` and counted in its figures.
    fn task_running_on_cpu(&self, cpu: usize, p: u32) -> bool {
        self.contributes(cpu, p) && self.tasks[p as usize].queued()
    }

    /// `cpu_runnable_without`: `cpu`'s runnable_avg without `p`'s, if it is there.
    fn cpu_runnable_without(&self, cpu: usize, p: u32) -> u64 {
        let runnable = self.cfs_rqs[cpu].avg.runnable_avg;
        if !self.contributes(cpu, p) {
            return runnable;
        }
        let se = &self.ses[self.tasks[p as usize].se as usize];
        runnable.saturating_sub(se.avg.runnable_avg)
    }

    /// `sched_balance_find_dst_group`: the idlest group of `cpu`'s domain `level` other than
    /// the local one (index into its groups), unless the local one is idle enough.
    fn sched_balance_find_dst_group(&mut self, cpu: usize, level: usize, p: u32) -> Option<usize> {
        // The ring is shared: one reference for the pass, not one per group.
        let groups = self.topo.domains[cpu][level].groups.clone();
        let mut idlest: Option<(usize, SgLbStats)> = None;
        let mut local = None;
        for (g, span) in groups.iter().enumerate() {
            if !span.iter().any(|&c| self.tasks[p as usize].cpus_mask[c]) {
                continue;
            }
            let is_local = span.contains(&cpu);
            let sgs = self.update_sg_wakeup_stats(cpu, level, span, p);
            if is_local {
                local = Some(sgs);
            } else if idlest.is_none_or(|(i, s)| self.pick_idlest(cpu, level, (i, &s), (g, &sgs))) {
                idlest = Some((g, sgs));
            }
        }
        let (idlest, idlest_sgs) = idlest?;
        let Some(local) = local else {
            return Some(idlest); // affinity left the local group out
        };
        let sd = &self.topo.domains[cpu][level];
        if local.group_type != idlest_sgs.group_type {
            return (local.group_type > idlest_sgs.group_type).then_some(idlest);
        }
        let pct = sd.imbalance_pct as u64;
        let keep_local = match local.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imbalance = SCHED_CAPACITY_SCALE * (pct - 100) / 100;
                (sd.flags & SD_NUMA != 0 && idlest_sgs.avg_load + imbalance >= local.avg_load)
                    || idlest_sgs.avg_load >= local.avg_load + imbalance
                    || 100 * local.avg_load <= pct * idlest_sgs.avg_load
            }
            GroupType::MisfitTask => {
                self.max_capacity(cpu, level, 0) >= self.max_capacity(cpu, level, idlest)
            }
            GroupType::HasSpare => {
                (sd.flags & SD_NUMA != 0
                    && self.numa_keeps_local(cpu, level, p, &local, &idlest_sgs))
                    || local.idle_cpus >= idlest_sgs.idle_cpus
            }
            // Not used in the slow path.
            GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => true,
        };
        (!keep_local).then_some(idlest)
    }

    /// `update_pick_idlest`: is group `b` idler than group `a`, the idlest so far?
    fn pick_idlest(
        &self,
        cpu: usize,
        level: usize,
        (a, sa): (usize, &SgLbStats),
        (b, sb): (usize, &SgLbStats),
    ) -> bool {
        if sb.group_type != sa.group_type {
            return sb.group_type < sa.group_type;
        }
        match sb.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => sa.avg_load > sb.avg_load,
            GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => false,
            GroupType::MisfitTask => {
                self.max_capacity(cpu, level, a) < self.max_capacity(cpu, level, b)
            }
            GroupType::HasSpare => {
                sa.idle_cpus < sb.idle_cpus
                    || (sa.idle_cpus == sb.idle_cpus && sa.group_util > sb.group_util)
            }
        }
    }

    /// `sgc->max_capacity` of group `g` of `cpu`'s domain `level`.
    fn max_capacity(&self, cpu: usize, level: usize, g: usize) -> u64 {
        let span = &self.topo.domains[cpu][level].groups[g];
        span.iter().map(|&c| self.capacity_of(c)).max().unwrap_or(0)
    }

    /// A NUMA domain with spare capacity keeps the task near its waker while the local node
    /// would stay within the allowed imbalance (`adjust_numa_imbalance`, with `imb_numa_nr`
    /// bounded by the CPUs the task may use there).
    fn numa_keeps_local(
        &self,
        cpu: usize,
        level: usize,
        p: u32,
        local: &SgLbStats,
        idlest: &SgLbStats,
    ) -> bool {
        let sd = &self.topo.domains[cpu][level];
        let allowed = &self.tasks[p as usize].cpus_mask;
        let mut imb_numa_nr = sd.imb_numa_nr;
        if !allowed.iter().all(|&a| a) {
            let in_local = sd.groups[0].iter().filter(|&&c| allowed[c]).count() as u32;
            imb_numa_nr = imb_numa_nr.min(in_local);
        }
        let imbalance = local.idle_cpus.abs_diff(idlest.idle_cpus) as i64;
        adjust_numa_imbalance(imbalance, local.sum_nr_running + 1, imb_numa_nr) == 0
    }

    /// `sched_balance_find_dst_group_cpu`: a CPU running only SCHED_IDLE tasks at once,
    /// else the idle CPU of the shallowest idle state (ties, or no cpuidle: the one idle
    /// since last), else the least loaded (`cpu` itself if no CPU qualifies).
    fn sched_balance_find_dst_group_cpu(
        &self,
        cpu: usize,
        level: usize,
        g: usize,
        p: u32,
    ) -> usize {
        let span = &self.topo.domains[cpu][level].groups[g];
        if span.len() == 1 {
            return span[0];
        }
        let allowed = &self.tasks[p as usize].cpus_mask;
        let (mut least_loaded, mut min_load) = (cpu, u64::MAX);
        let (mut shallowest, mut min_exit_latency, mut latest_idle) = (None, u64::MAX, 0);
        for &i in span.iter().filter(|&&i| allowed[i]) {
            if self.sched_idle_cpu(i) {
                return i;
            }
            let rq = &self.rqs[i];
            if self.idle_cpu(i) {
                let stamp = rq.idle_stamp.unwrap_or(0);
                match rq.idle_exit_latency {
                    Some(exit) if exit < min_exit_latency => {
                        (shallowest, min_exit_latency, latest_idle) = (Some(i), exit, stamp);
                    }
                    exit if exit.is_none_or(|e| e == min_exit_latency) && stamp > latest_idle => {
                        (shallowest, latest_idle) = (Some(i), stamp);
                    }
                    _ => {}
                }
            } else if shallowest.is_none() {
                let load = self.cpu_load(i);
                if load < min_load {
                    (least_loaded, min_load) = (i, load);
                }
            }
        }
        shallowest.unwrap_or(least_loaded)
    }
}
