//! The load balancer's view of a domain (fair.c, 6.12): each group's statistics
//! (`update_sg_lb_stats`), its type (`group_classify`), the busiest group
//! (`update_sd_pick_busiest`), and whether and how much to pull
//! (`sched_balance_find_src_group`, `calculate_imbalance`). Pure arithmetic over the
//! per-CPU figures the caller gathers, so that each decision can be checked by hand.
//! Simplified: no asym packing (no arch CPU priorities), no NUMA balancing classes.

use crate::sched::pelt::SCHED_CAPACITY_SCALE;
use crate::sched::topology::{
    SD_ASYM_CPUCAPACITY, SD_NUMA, SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY, SD_SHARE_LLC,
};

/// `enum group_type`, in pulling priority order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    MisfitTask,
    SmtBalance,
    AsymPacking,
    Imbalanced,
    Overloaded,
}

/// `enum migration_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigrationType {
    #[default]
    Load,
    Util,
    Task,
    Misfit,
}

/// `enum cpu_idle_type` (schedstat version 16's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuIdleType {
    NotIdle = 0,
    Idle = 1,
    NewlyIdle = 2,
}

impl CpuIdleType {
    /// `env->idle` read as a truth value: the destination CPU is idle or newly idle.
    pub fn idle(self) -> bool {
        self != CpuIdleType::NotIdle
    }
}

/// What `update_sg_lb_stats` reads of one CPU.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuStats {
    /// `cpu_load`: the root cfs_rq's load_avg.
    pub load: u64,
    /// `cpu_util_cfs`.
    pub util: u64,
    /// `cpu_runnable`: the root cfs_rq's runnable_avg.
    pub runnable: u64,
    /// `rq->cfs.h_nr_queued`, or 6.14+'s `h_nr_runnable` (`Sched::lb_h_nr_running`).
    pub h_nr_running: u32,
    /// `rq->nr_running`.
    pub nr_running: u32,
    /// `idle_cpu`.
    pub idle: bool,
    /// `cpu_overutilized`.
    pub overutilized: bool,
    /// `rq->misfit_task_load`.
    pub misfit_task_load: u64,
    /// `sched_reduced_capacity`: one fair task on a CPU `check_cpu_capacity` finds reduced.
    pub reduced_capacity: bool,
    /// `capacity_of`, `check_cpu_capacity` and `cpu_util_cfs_boost`, for the busiest queue.
    pub capacity: u64,
    pub capacity_reduced: bool,
    pub util_boost: u64,
}

/// A sched_group as the balancer sees it.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupInfo {
    /// `sgc->capacity`, `min_capacity`, `max_capacity`.
    pub capacity: u64,
    pub min_capacity: u64,
    pub max_capacity: u64,
    /// `group_weight`: its CPUs.
    pub weight: u32,
    /// `sg->flags`: its child domain's flags.
    pub flags: u32,
    /// `sgc->imbalance`: a child level could not balance because of affinity.
    pub imbalance: bool,
    /// `sg->cores`.
    pub cores: u32,
}

/// `struct sg_lb_stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SgLbStats {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: GroupType,
    pub group_smt_balance: bool,
    pub group_misfit_task_load: u64,
}

/// The domain and destination a balance pass works for (part of `struct lb_env`).
#[derive(Debug, Clone, Copy)]
pub struct Dst {
    /// `sd->flags`, `sd->imbalance_pct`, `sd->imb_numa_nr`.
    pub sd_flags: u32,
    pub imbalance_pct: u64,
    pub imb_numa_nr: u32,
    pub idle: CpuIdleType,
    /// `capacity_of(dst_cpu)`, and `env->dst_core_idle`.
    pub capacity: u64,
    pub core_idle: bool,
}

/// `update_sg_lb_stats` of group `g` over its CPUs `cpus` (local: the destination's group).
/// Also returns whether a CPU is overloaded (more than one task, or a misfit) and whether
/// one is overutilized (`sg_overloaded`, `sg_overutilized`).
pub fn update_sg_lb_stats(
    dst: &Dst,
    g: &GroupInfo,
    local: bool,
    cpus: impl Iterator<Item = CpuStats>,
) -> (SgLbStats, bool, bool) {
    let mut sgs = SgLbStats::default();
    let (mut overloaded, mut overutilized) = (false, false);
    for c in cpus {
        sgs.group_load += c.load;
        sgs.group_util += c.util;
        sgs.group_runnable += c.runnable;
        sgs.sum_h_nr_running += c.h_nr_running;
        sgs.sum_nr_running += c.nr_running;
        overloaded |= c.nr_running > 1;
        overutilized |= c.overutilized;
        if c.nr_running == 0 && c.idle {
            sgs.idle_cpus += 1;
            continue; // an idle CPU has no misfit task
        }
        if local {
            continue;
        }
        if dst.sd_flags & SD_ASYM_CPUCAPACITY != 0 {
            if sgs.group_misfit_task_load < c.misfit_task_load {
                sgs.group_misfit_task_load = c.misfit_task_load;
                overloaded = true;
            }
        } else if dst.idle.idle() && c.reduced_capacity {
            sgs.group_misfit_task_load = sgs.group_misfit_task_load.max(c.load);
        }
    }
    sgs.group_capacity = g.capacity;
    sgs.group_weight = g.weight;
    // smt_balance: an SMT group sharing its capacity among tasks, seen by an idle CPU.
    sgs.group_smt_balance = !local
        && dst.idle.idle()
        && g.flags & SD_SHARE_CPUCAPACITY != 0
        && sgs.sum_h_nr_running > 1;
    sgs.group_type = group_classify(dst.imbalance_pct, g.imbalance, &sgs);
    if sgs.group_type == GroupType::Overloaded {
        sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
    }
    (sgs, overloaded, overutilized)
}

/// `group_has_capacity`.
fn group_has_capacity(pct: u64, s: &SgLbStats) -> bool {
    s.sum_nr_running < s.group_weight
        || (s.group_capacity * pct >= s.group_runnable * 100
            && s.group_capacity * 100 > s.group_util * pct)
}

/// `group_is_overloaded`: more tasks than CPUs, and too little capacity for them.
fn group_is_overloaded(pct: u64, s: &SgLbStats) -> bool {
    s.sum_nr_running > s.group_weight
        && (s.group_capacity * 100 < s.group_util * pct
            || s.group_capacity * pct < s.group_runnable * 100)
}

/// `group_classify`.
pub fn group_classify(pct: u64, imbalanced: bool, s: &SgLbStats) -> GroupType {
    if group_is_overloaded(pct, s) {
        GroupType::Overloaded
    } else if imbalanced {
        GroupType::Imbalanced
    } else if s.group_smt_balance {
        GroupType::SmtBalance
    } else if s.group_misfit_task_load != 0 {
        GroupType::MisfitTask
    } else if !group_has_capacity(pct, s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// `capacity_greater`: more than about 5% apart.
pub fn capacity_greater(a: u64, b: u64) -> bool {
    a * 1024 > b * 1078
}

/// The domain's statistics as `update_sd_lb_stats` leaves them (`struct sd_lb_stats`).
#[derive(Debug, Clone, Copy)]
pub struct SdLbStats {
    /// The busiest group so far (its index among the domain's groups, and what it is).
    pub busiest: Option<(usize, GroupInfo)>,
    pub busiest_stat: SgLbStats,
    pub local: GroupInfo,
    pub local_stat: SgLbStats,
    pub total_load: u64,
    pub total_capacity: u64,
    pub avg_load: u64,
    pub prefer_sibling: bool,
}

impl SdLbStats {
    /// `init_sd_lb_stats`: the busiest so far is the least busy there can be.
    pub fn new() -> SdLbStats {
        SdLbStats {
            busiest: None,
            busiest_stat: SgLbStats {
                idle_cpus: u32::MAX,
                ..SgLbStats::default()
            },
            local: GroupInfo::default(),
            local_stat: SgLbStats::default(),
            total_load: 0,
            total_capacity: 0,
            avg_load: 0,
            prefer_sibling: false,
        }
    }

    /// `update_sd_lb_stats`' step for group `i`, once its statistics are known.
    pub fn add_group(&mut self, dst: &Dst, i: usize, g: GroupInfo, s: SgLbStats, local: bool) {
        if local {
            (self.local, self.local_stat) = (g, s);
        } else if update_sd_pick_busiest(dst, self, &g, &s) {
            (self.busiest, self.busiest_stat) = (Some((i, g)), s);
        }
        self.total_load += s.group_load;
        self.total_capacity += s.group_capacity;
        // The child domain of the busiest group prefers its siblings' CPUs first.
        self.prefer_sibling = self
            .busiest
            .is_some_and(|(_, b)| b.flags & SD_PREFER_SIBLING != 0);
    }

    /// `sds->avg_load`: the domain's load per capacity.
    fn domain_avg_load(&self) -> u64 {
        self.total_load * SCHED_CAPACITY_SCALE / self.total_capacity
    }
}

impl Default for SdLbStats {
    fn default() -> Self {
        SdLbStats::new()
    }
}

fn smt(g: &GroupInfo) -> bool {
    g.flags & SD_SHARE_CPUCAPACITY != 0
}

/// `update_sd_pick_busiest`: is group `g` (statistics `s`) busier than the one picked so far?
pub fn update_sd_pick_busiest(dst: &Dst, sds: &SdLbStats, g: &GroupInfo, s: &SgLbStats) -> bool {
    let busiest = &sds.busiest_stat;
    if s.sum_h_nr_running == 0 {
        return false;
    }
    let asym = dst.sd_flags & SD_ASYM_CPUCAPACITY != 0;
    // Misfit tasks this CPU cannot help.
    if asym
        && s.group_type == GroupType::MisfitTask
        && (!dst.core_idle
            || !capacity_greater(dst.capacity, g.max_capacity)
            || sds.local_stat.group_type != GroupType::HasSpare)
    {
        return false;
    }
    // Bigger CPUs with no more than a task each: moving their tasks would cost throughput.
    if asym
        && s.group_type <= GroupType::FullyBusy
        && capacity_greater(g.min_capacity, dst.capacity)
    {
        return false;
    }
    if s.group_type != busiest.group_type {
        return s.group_type > busiest.group_type;
    }
    // Fewer idle CPUs, then more tasks.
    let busier = || {
        s.idle_cpus < busiest.idle_cpus
            || (s.idle_cpus == busiest.idle_cpus && s.sum_nr_running > busiest.sum_nr_running)
    };
    let smt_vs_nonsmt = sds.busiest.is_some_and(|(_, b)| smt(&b) != smt(g));
    match s.group_type {
        GroupType::Overloaded => s.avg_load > busiest.avg_load,
        GroupType::Imbalanced | GroupType::AsymPacking => false,
        GroupType::MisfitTask => s.group_misfit_task_load > busiest.group_misfit_task_load,
        GroupType::SmtBalance if s.idle_cpus != 0 || busiest.idle_cpus != 0 => busier(),
        // avg_load is not computed for these: the first wins, unless SMT siblings come later.
        GroupType::SmtBalance | GroupType::FullyBusy => {
            s.avg_load > busiest.avg_load
                || (s.avg_load == busiest.avg_load && !sds.busiest.is_some_and(|(_, b)| smt(&b)))
        }
        // Do not pull the one task of an SMT core over a group of plain CPUs.
        GroupType::HasSpare if smt_vs_nonsmt => !(smt(g) && s.sum_h_nr_running <= 1),
        GroupType::HasSpare => busier(),
    }
}

/// What a balance pass should do: pull `imbalance` of `migration_type` from the busiest
/// group (`env->migration_type`, `env->imbalance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Imbalance {
    pub migration_type: MigrationType,
    pub imbalance: i64,
}

/// `sibling_imbalance`: tasks to move so that both groups run as many per core.
fn sibling_imbalance(dst: &Dst, sds: &SdLbStats, busiest: &SgLbStats, local: &SgLbStats) -> i64 {
    if !dst.idle.idle() || busiest.sum_nr_running == 0 {
        return 0;
    }
    let (nr_b, nr_l) = (busiest.sum_nr_running as i64, local.sum_nr_running as i64);
    let nc_b = sds.busiest.map_or(1, |(_, b)| b.cores) as i64;
    let nc_l = sds.local.cores as i64;
    if nc_b == nc_l {
        return (nr_b - nr_l).max(0);
    }
    let imbalance = (nc_l * nr_b - nc_b * nr_l).max(0);
    let imbalance = (2 * imbalance + nc_l + nc_b) / (nc_l + nc_b);
    if imbalance <= 1 && nr_l == 0 && nr_b > 1 {
        2 // take advantage of an empty group
    } else {
        imbalance
    }
}

/// `adjust_numa_imbalance`: a pair of communicating tasks may stay on a lightly loaded node.
pub fn adjust_numa_imbalance(imbalance: i64, dst_running: u32, imb_numa_nr: u32) -> i64 {
    const NUMA_IMBALANCE_MIN: i64 = 2;
    if dst_running > imb_numa_nr || imbalance > NUMA_IMBALANCE_MIN {
        imbalance
    } else {
        0
    }
}

/// `calculate_imbalance`.
fn calculate_imbalance(dst: &Dst, sds: &mut SdLbStats) -> Imbalance {
    let (local, busiest) = (sds.local_stat, sds.busiest_stat);
    let task = |imbalance| Imbalance {
        migration_type: MigrationType::Task,
        imbalance,
    };
    match busiest.group_type {
        GroupType::MisfitTask if dst.sd_flags & SD_ASYM_CPUCAPACITY != 0 => {
            return Imbalance {
                migration_type: MigrationType::Misfit,
                imbalance: 1,
            }
        }
        GroupType::MisfitTask => {
            return Imbalance {
                migration_type: MigrationType::Load,
                imbalance: busiest.group_misfit_task_load as i64,
            }
        }
        GroupType::AsymPacking => return task(busiest.sum_h_nr_running as i64),
        GroupType::SmtBalance | GroupType::Imbalanced => return task(1),
        _ => {}
    }
    if local.group_type == GroupType::HasSpare {
        if busiest.group_type > GroupType::FullyBusy && dst.sd_flags & SD_SHARE_LLC == 0 {
            // Fill the local group's spare capacity.
            let spare = local.group_capacity.max(local.group_util) - local.group_util;
            if dst.idle.idle() && spare == 0 {
                return task(1);
            }
            return Imbalance {
                migration_type: MigrationType::Util,
                imbalance: spare as i64,
            };
        }
        let mut imbalance = if busiest.group_weight == 1 || sds.prefer_sibling {
            sibling_imbalance(dst, sds, &busiest, &local)
        } else {
            (local.idle_cpus as i64 - busiest.idle_cpus as i64).max(0)
        };
        if dst.sd_flags & SD_NUMA != 0 {
            imbalance = adjust_numa_imbalance(imbalance, local.sum_nr_running + 1, dst.imb_numa_nr);
        }
        return task(imbalance >> 1);
    }
    if local.group_type < GroupType::Overloaded {
        // The local group will become overloaded: avg_load is needed after all.
        sds.local_stat.avg_load = local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity;
        sds.avg_load = sds.domain_avg_load();
        if sds.local_stat.avg_load >= busiest.avg_load || sds.local_stat.avg_load >= sds.avg_load {
            return task(0);
        }
    }
    // Unsigned as in the kernel: a difference below zero wraps, and the other one wins.
    let (avg, l_avg) = (sds.avg_load, sds.local_stat.avg_load);
    let imbalance = (busiest
        .avg_load
        .wrapping_sub(avg)
        .wrapping_mul(busiest.group_capacity))
    .min(avg.wrapping_sub(l_avg).wrapping_mul(local.group_capacity))
        / SCHED_CAPACITY_SCALE;
    Imbalance {
        migration_type: MigrationType::Load,
        imbalance: imbalance as i64,
    }
}

/// `sched_balance_find_src_group`'s decision once the domain's statistics are known: the
/// busiest group's index and what to pull from it, or None when the domain is balanced.
/// `eas` is "the root domain has an energy model and is not overutilized" (EAS places).
pub fn find_src_group(dst: &Dst, sds: &mut SdLbStats, eas: bool) -> Option<(usize, Imbalance)> {
    let (i, _) = sds.busiest?;
    let (busiest, local) = (sds.busiest_stat, sds.local_stat);
    let force = match busiest.group_type {
        GroupType::MisfitTask => true,
        _ if eas => return None,
        GroupType::AsymPacking | GroupType::Imbalanced => true,
        _ => false,
    };
    if !force {
        if local.group_type > busiest.group_type {
            return None;
        }
        if local.group_type == GroupType::Overloaded {
            sds.avg_load = sds.domain_avg_load();
            if local.avg_load >= busiest.avg_load
                || local.avg_load >= sds.avg_load
                || 100 * busiest.avg_load <= dst.imbalance_pct * local.avg_load
            {
                return None;
            }
        }
        let siblings = sds.prefer_sibling
            && local.group_type == GroupType::HasSpare
            && sibling_imbalance(dst, sds, &busiest, &local) > 1;
        if !siblings && busiest.group_type != GroupType::Overloaded {
            if !dst.idle.idle() {
                return None; // let an idle CPU pull
            }
            let smt_from_nonsmt = busiest.group_type == GroupType::SmtBalance
                && sds.busiest.is_some_and(|(_, b)| smt(&b) != smt(&sds.local));
            if !smt_from_nonsmt
                && ((busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1)
                    || busiest.sum_h_nr_running == 1)
            {
                return None;
            }
        }
    }
    let imb = calculate_imbalance(dst, sds);
    (imb.imbalance != 0).then_some((i, imb))
}

/// `sched_balance_find_src_rq`: the CPU of the busiest group to pull from, among
/// (cpu, statistics) pairs.
pub fn find_src_rq(
    dst: &Dst,
    imb: &Imbalance,
    cpus: impl Iterator<Item = (usize, CpuStats)>,
) -> Option<usize> {
    let mut busiest = None;
    let (mut busiest_load, mut busiest_capacity, mut busiest_util, mut busiest_nr) = (0, 1, 0, 0);
    for (cpu, c) in cpus {
        let nr = c.h_nr_running;
        if nr == 0 {
            continue;
        }
        // Higher per-CPU capacity beats balancing average load.
        if dst.sd_flags & SD_ASYM_CPUCAPACITY != 0
            && !capacity_greater(dst.capacity, c.capacity)
            && nr == 1
        {
            continue;
        }
        match imb.migration_type {
            MigrationType::Load => {
                if nr == 1 && c.load as i64 > imb.imbalance && !c.capacity_reduced {
                    continue;
                }
                // max(load / capacity), cross-multiplied.
                if c.load * busiest_capacity > busiest_load * c.capacity {
                    (busiest_load, busiest_capacity, busiest) = (c.load, c.capacity, Some(cpu));
                }
            }
            MigrationType::Util => {
                if nr > 1 && busiest_util < c.util_boost {
                    (busiest_util, busiest) = (c.util_boost, Some(cpu));
                }
            }
            MigrationType::Task => {
                if busiest_nr < nr {
                    (busiest_nr, busiest) = (nr, Some(cpu));
                }
            }
            MigrationType::Misfit => {
                if c.misfit_task_load > busiest_load {
                    (busiest_load, busiest) = (c.misfit_task_load, Some(cpu));
                }
            }
        }
    }
    busiest
}
