//! Load balancing of the fair class (fair.c, 6.12's `sched_balance_*`; 6.1's names where
//! they differ): the periodic balance of a CPU's domains (`sched_balance_domains`), the
//! newly idle one (`sched_balance_newidle`), and one pass over a domain
//! (`sched_balance_rq`): should this CPU balance, which group and queue are busiest (the
//! arithmetic in `stats`), which tasks may move (`migrate`). Simplified: no NUMA balancing,
//! no asym packing, no `sgc->imbalance` hand-over between levels.

mod migrate;
pub mod ni_random;
mod nohz;
pub mod stats;

use crate::sched::features::{Feat, NewidleGate};
use crate::sched::hooks::Hooks;
use crate::sched::ops::Op;
use crate::sched::pelt::SCHED_CAPACITY_SCALE;
use crate::sched::rq::Rq;
use crate::sched::topology::{SchedDomain, SchedGroup, SD_BALANCE_NEWIDLE, SD_SHARE_CPUCAPACITY};
use crate::sched::Sched;
use crate::time::Ns;
use migrate::LbEnv;
use stats::{
    find_src_group, find_src_rq, update_sg_lb_stats, CpuIdleType, CpuStats, Dst, GroupInfo,
    Imbalance, MigrationType, SdLbStats,
};

/// What the balancer makes of a delayed task (`--set fair.balance_delayed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalanceDelayed {
    /// ≤ 6.13: counted among its CPU's tasks (`h_nr_queued`), moved like any other.
    Queued,
    /// 6.14+: only runnable tasks count (`h_nr_runnable`); a delayed one moves only when
    /// the pass balances load (`can_migrate_task`).
    Runnable,
}

/// `sysctl_sched_migration_cost`: 0.5 ms.
pub const MIGRATION_COST_NS: Ns = 500_000;

/// Why a pass found nothing to pull: no busier group (`lb_nobusyg`), or no busier queue in
/// it (`lb_nobusyq`).
enum NoBusiest {
    Group,
    Queue,
}

/// `MAX_PINNED_INTERVAL`, ms: how far the interval backs off when every task is pinned.
const MAX_PINNED_INTERVAL: u64 = 512;

impl Sched {
    /// `check_cpu_capacity`: RT, deadline (and IRQ) time took a noticeable share of `cpu`.
    pub(crate) fn check_cpu_capacity(&self, cpu: usize, sd: &SchedDomain) -> bool {
        let rq = &self.rqs[cpu];
        rq.cpu_capacity * (sd.imbalance_pct as u64) < rq.capacity * 100
    }

    /// The fair tasks the balancer counts on `cpu`: `rq->cfs.h_nr_queued`, or 6.14+'s
    /// `h_nr_runnable`, which leaves delayed tasks out.
    pub(in crate::sched::fair) fn lb_h_nr_running(&self, cpu: usize) -> u32 {
        let cfs = &self.cfs_rqs[cpu];
        match self.feat.balance_delayed {
            BalanceDelayed::Queued => cfs.h_nr_queued,
            BalanceDelayed::Runnable => cfs.h_nr_runnable,
        }
    }

    /// What `update_sg_lb_stats` reads of `cpu` (what only `sched_balance_find_src_rq` reads
    /// left at zero: `lb_src_rq_stats`).
    fn lb_cpu_stats(&self, cpu: usize, sd: &SchedDomain) -> CpuStats {
        let (cfs, rq) = (&self.cfs_rqs[cpu], &self.rqs[cpu]);
        let h_nr_running = self.lb_h_nr_running(cpu);
        CpuStats {
            load: cfs.avg.load_avg,
            util: self.cpu_util(cpu),
            runnable: cfs.avg.runnable_avg,
            h_nr_running,
            nr_running: self.nr_running(cpu),
            idle: self.idle_cpu(cpu),
            overutilized: self.cpu_overutilized(cpu),
            misfit_task_load: rq.misfit_task_load,
            reduced_capacity: h_nr_running == 1 && self.check_cpu_capacity(cpu, sd),
            ..CpuStats::default()
        }
    }

    /// What `sched_balance_find_src_rq` reads of `cpu`, a CPU of the busiest group.
    fn lb_src_rq_stats(&self, cpu: usize, sd: &SchedDomain) -> CpuStats {
        CpuStats {
            capacity: self.rqs[cpu].cpu_capacity,
            capacity_reduced: self.check_cpu_capacity(cpu, sd),
            util_boost: self.cpu_util_cfs_boost(cpu),
            ..self.lb_cpu_stats(cpu, sd)
        }
    }

    /// A group of `cpu`'s domain `level` as the balancer sees it: its capacity now, its
    /// child domain's flags (none at the lowest level, whose child was degenerate), cores.
    pub(in crate::sched::fair) fn lb_group_info(
        &self,
        cpu: usize,
        level: usize,
        group: &SchedGroup,
    ) -> GroupInfo {
        let span = &group.span;
        let caps = span.iter().map(|&c| self.rqs[c].cpu_capacity);
        GroupInfo {
            capacity: caps.clone().sum(),
            min_capacity: caps.clone().min().unwrap_or(0),
            max_capacity: caps.max().unwrap_or(0),
            weight: span.len() as u32,
            flags: level
                .checked_sub(1)
                .map_or(0, |c| self.topo.domains[cpu][c].flags),
            imbalance: (self.topo.imbalanced)
                .contains(&(self.topo.domains[cpu][level].level, span[0])),
            cores: group.cores,
        }
    }

    /// `is_core_idle`: every SMT sibling of `cpu` is idle.
    fn is_core_idle(&self, cpu: usize) -> bool {
        self.topo.cache[cpu].smt.iter().all(|&c| self.idle_cpu(c))
    }

    /// `should_we_balance`: a newly idle CPU balances if still empty; otherwise only the
    /// local group's first idle CPU (on an idle core above the SMT level) does, or its first
    /// CPU when none is idle.
    fn should_we_balance(&self, cpu: usize, level: usize, idle: CpuIdleType) -> bool {
        if idle == CpuIdleType::NewlyIdle {
            return self.nr_running(cpu) == 0;
        }
        let sd = &self.topo.domains[cpu][level];
        let local = &sd.groups[0];
        let smt_level = sd.flags & SD_SHARE_CPUCAPACITY != 0;
        let mut idle_smt = None;
        for &c in local.iter().filter(|&&c| self.idle_cpu(c)) {
            if !smt_level && !self.is_core_idle(c) {
                idle_smt.get_or_insert(c);
                continue;
            }
            return c == cpu;
        }
        idle_smt.unwrap_or(local[0]) == cpu
    }

    /// `sched_balance_rq` of `cpu`'s domain `level`: the tasks moved, and whether balancing
    /// should go on to the parent domains (`continue_balancing`).
    pub(crate) fn sched_balance_rq<H: Hooks>(
        &mut self,
        cpu: usize,
        level: usize,
        idle: CpuIdleType,
        h: &mut H,
    ) -> (u32, bool) {
        let i = idle as usize;
        self.topo.domains[cpu][level].stats.lb_count[i] += 1;
        self.ops.add(cpu, Op::BalanceDomain, 1);
        if !self.should_we_balance(cpu, level, idle) {
            self.balanced(cpu, level, idle, false);
            return (0, false);
        }
        if level == 0 {
            self.update_cpu_capacity(cpu, h);
        }
        // CPUs whose tasks all turned out pinned away from here, left out of a redo.
        let mut excluded = Vec::new();
        let (env, moved) = loop {
            let groups = self.topo.domains[cpu][level].groups.len() as u64;
            self.ops.add(cpu, Op::BalanceGroup, groups);
            let (src, imb) = match self.find_src(cpu, level, idle, &excluded, h) {
                Ok(found) => found,
                Err(none) => {
                    let st = &mut self.topo.domains[cpu][level].stats;
                    match none {
                        NoBusiest::Group => st.lb_nobusyg[i] += 1,
                        NoBusiest::Queue => st.lb_nobusyq[i] += 1,
                    }
                    self.balanced(cpu, level, idle, false);
                    return (0, true);
                }
            };
            // update_lb_imbalance_stat
            self.topo.domains[cpu][level].stats.lb_imbalance[i][imb.migration_type as usize] +=
                imb.imbalance as u64;
            let mut env = LbEnv::new(cpu, src, idle, imb, &self.topo.domains[cpu][level]);
            // With one task there, nothing to detach: straight to the failure (and perhaps
            // the active balance), not to the all-pinned case, which needs tasks examined.
            if self.nr_running(src) <= 1 {
                break (env, 0);
            }
            // ≤ 3.11 (eager h_load): every group's h_load on the source, once per jiffy.
            self.update_h_load(src, cpu);
            let moved = self.detach_attach(&mut env, h);
            let sd = &mut self.topo.domains[cpu][level];
            sd.stats.lb_gained[i] += moved;
            sd.stats.lb_hot_gained[i] += env.hot_gained;
            self.affinity_imbalance(cpu, level, &env);
            if !env.all_pinned() {
                break (env, moved);
            }
            // Every task there was pinned: try the rest of the domain if some of it is
            // outside the local group; else balanced as far as this level can tell.
            excluded.push(src);
            let sd = &self.topo.domains[cpu][level];
            if sd
                .span
                .iter()
                .all(|c| excluded.contains(c) || sd.groups[0].contains(c))
            {
                self.balanced(cpu, level, idle, true);
                return (0, true);
            }
        };
        if moved > 0 {
            self.topo.domains[cpu][level].nr_balance_failed = 0;
        } else if !self.balance_failed(&env, cpu, level, h) {
            return (0, true); // out_one_pinned
        }
        let sd = &mut self.topo.domains[cpu][level];
        sd.balance_interval = sd.min_interval; // unbalanced: balance again soon
        (moved, true)
    }

    /// `sched_balance_find_src_group` then `sched_balance_find_src_rq` for `cpu`'s domain
    /// `level`: the CPU to pull from and what to pull, or which of the two found nothing.
    fn find_src<H: Hooks>(
        &self,
        cpu: usize,
        level: usize,
        idle: CpuIdleType,
        excluded: &[usize],
        h: &mut H,
    ) -> Result<(usize, Imbalance), NoBusiest> {
        let sd = &self.topo.domains[cpu][level];
        let dst = Dst {
            sd_flags: sd.flags,
            imbalance_pct: sd.imbalance_pct as u64,
            imb_numa_nr: sd.imb_numa_nr,
            idle,
            capacity: self.rqs[cpu].cpu_capacity,
            core_idle: self.is_core_idle(cpu),
        };
        let mut sds = SdLbStats::new();
        let (mut sum_util, mut sg_overloaded, mut sg_overutilized) = (0, false, false);
        for (i, span) in sd.groups.iter().enumerate() {
            let g = self.lb_group_info(cpu, level, span);
            let cpus =
                (span.iter().filter(|c| !excluded.contains(c))).map(|&c| self.lb_cpu_stats(c, sd));
            let (s, overloaded, overutilized) = update_sg_lb_stats(&dst, &g, i == 0, cpus);
            sum_util += s.group_util;
            sg_overloaded |= overloaded;
            sg_overutilized |= overutilized;
            sds.add_group(&dst, i, g, s, i == 0);
        }
        // The root domain's balance sets the flags or clears them; a lower one only sets
        // overutilized.
        let root = level + 1 == self.topo.domains[cpu].len();
        if root {
            self.overloaded.set(sg_overloaded);
        }
        if root || sg_overutilized {
            self.set_rd_overutilized(sg_overutilized, cpu, h);
        }
        self.update_idle_cpu_scan(cpu, sd, idle, sum_util);
        let eas = !self.is_rd_overutilized();
        let (busiest, imb) = find_src_group(&dst, &mut sds, eas).ok_or(NoBusiest::Group)?;
        let cpus = (sd.groups[busiest].iter().filter(|c| !excluded.contains(c)))
            .map(|&c| (c, self.lb_src_rq_stats(c, sd)));
        Ok((find_src_rq(&dst, &imb, cpus).ok_or(NoBusiest::Queue)?, imb))
    }

    /// `update_idle_cpu_scan`: a periodic balance of the LLC domain sets how many CPUs a
    /// wakeup may scan there (SIS_UTIL): all of them when idle, fewer as the square of the
    /// average utilization grows, none from 100/imbalance_pct (85%) on.
    fn update_idle_cpu_scan(&self, cpu: usize, sd: &SchedDomain, idle: CpuIdleType, sum_util: u64) {
        let llc_weight = self.topo.cache[cpu].llc_size as u64;
        if !self.feat.has(Feat::SisUtil)
            || idle == CpuIdleType::NewlyIdle
            || sd.span.len() as u64 != llc_weight
        {
            return;
        }
        let y = nr_idle_scan(sum_util, llc_weight, sd.imbalance_pct as u64);
        self.topo.llc_shared(cpu).nr_idle_scan.set(y);
    }

    /// A pass that left imbalance because some task could not come (LBF_SOME_PINNED) marks
    /// the parent level's local group imbalanced, for the parent to classify
    /// (`group_imbalanced`).
    fn affinity_imbalance(&mut self, cpu: usize, level: usize, env: &LbEnv) {
        if let Some(parent) = self.topo.domains[cpu].get(level + 1) {
            if env.some_pinned() && env.imbalance().imbalance > 0 {
                let key = (parent.level, parent.groups[0][0]);
                self.topo.imbalanced.insert(key);
            }
        }
    }

    /// A pass that moved nothing: a failure (but for newly idle and misfit passes, which do
    /// not count against the periodic balance), then perhaps the active balance. False when
    /// the busiest CPU's running task may not come here (`out_one_pinned`: the interval
    /// backs off instead).
    fn balance_failed<H: Hooks>(
        &mut self,
        env: &LbEnv,
        cpu: usize,
        level: usize,
        h: &mut H,
    ) -> bool {
        let (src, idle, misfit) = (
            env.src_cpu(),
            env.idle(),
            env.imbalance().migration_type == MigrationType::Misfit,
        );
        let sd = &mut self.topo.domains[cpu][level];
        sd.stats.lb_failed[idle as usize] += 1;
        if idle != CpuIdleType::NewlyIdle && !misfit {
            sd.nr_balance_failed += 1;
        }
        if !self.need_active_balance(env, cpu, level) {
            return true;
        }
        if !self.rqs[src]
            .curr
            .is_some_and(|c| self.tasks[c as usize].cpus_mask[cpu])
        {
            let sd = &mut self.topo.domains[cpu][level];
            let backs_off =
                idle != CpuIdleType::NewlyIdle && !misfit && sd.balance_interval < sd.max_interval;
            sd.balance_interval <<= backs_off as u32;
            return false;
        }
        self.active_load_balance(src, cpu, h);
        true
    }

    /// `need_active_balance`: pull the busiest CPU's running task through the stopper when
    /// it is a misfit, when balancing by tasks failed more than `cache_nice_tries` + 2 times,
    /// or when this idle CPU has clearly more capacity than the busiest's lone fair task has.
    fn need_active_balance(&self, env: &LbEnv, cpu: usize, level: usize) -> bool {
        let sd = &self.topo.domains[cpu][level];
        let (src, imb) = (env.src_cpu(), env.imbalance());
        let reduced = || {
            self.check_cpu_capacity(src, sd)
                && self.rqs[src].cpu_capacity * (sd.imbalance_pct as u64)
                    < self.rqs[cpu].cpu_capacity * 100
        };
        (imb.migration_type == MigrationType::Task
            && sd.nr_balance_failed > sd.cache_nice_tries + 2)
            || (env.idle().idle() && self.lb_h_nr_running(src) == 1 && reduced())
            || imb.migration_type == MigrationType::Misfit
    }

    /// `active_load_balance_cpu_stop` on `src` for `dst`: the stopper takes the least recently
    /// run task it may move (`detach_one_task`: the running one is off the CPU for it) to
    /// `dst`, counted on `dst`'s lowest domain spanning both.
    fn active_load_balance<H: Hooks>(&mut self, src: usize, dst: usize, h: &mut H) {
        let Some(level) = self.topo.domains[dst]
            .iter()
            .position(|sd| sd.span.contains(&src))
        else {
            return;
        };
        if self.nr_running(src) == 0 {
            return; // only the stopper left
        }
        let sd = &mut self.topo.domains[dst][level];
        sd.stats.alb_count += 1;
        let p = self.rqs[src]
            .cfs_tasks
            .iter(&self.group_nodes)
            .find(|&p| self.tasks[p as usize].cpus_mask[dst]);
        let sd = &mut self.topo.domains[dst][level];
        match p {
            Some(p) => {
                sd.stats.alb_pushed += 1;
                sd.nr_balance_failed = 0;
                self.move_task(p, src, dst, h);
            }
            None => sd.stats.alb_failed += 1,
        }
    }

    /// `out_balanced` (or `out_all_pinned`): counted as balanced, no failure, and the interval backs off (up to twice the
    /// domain's weight, or MAX_PINNED_INTERVAL when every task was pinned), but for a
    /// newly idle pass, which ignores intervals.
    fn balanced(&mut self, cpu: usize, level: usize, idle: CpuIdleType, all_pinned: bool) {
        // Balanced with tasks free to move: the parent's group is no longer imbalanced.
        if let Some(parent) = self.topo.domains[cpu]
            .get(level + 1)
            .filter(|_| !all_pinned)
        {
            let key = (parent.level, parent.groups[0][0]);
            self.topo.imbalanced.remove(&key);
        }
        let sd = &mut self.topo.domains[cpu][level];
        sd.stats.lb_balanced[idle as usize] += 1;
        sd.nr_balance_failed = 0;
        if idle != CpuIdleType::NewlyIdle
            && ((all_pinned && sd.balance_interval < MAX_PINNED_INTERVAL)
                || sd.balance_interval < sd.max_interval)
        {
            sd.balance_interval *= 2;
        }
    }

    /// `get_sd_balance_interval` in jiffies: the domain's interval, times `busy_factor` on a
    /// busy CPU less a jiffy (so that levels do not balance in step), within
    /// [1, `max_load_balance_interval` = HZ·#CPUs/10].
    fn sd_balance_interval(&self, sd: &SchedDomain, busy: bool) -> u64 {
        let hz = self.feat.hz as u64;
        let mut ms = sd.balance_interval;
        if busy {
            ms *= sd.busy_factor as u64;
        }
        let jiffies = (ms * hz).div_ceil(1000) - busy as u64; // msecs_to_jiffies
        let max = (hz * self.rqs.len() as u64 / 10).max(1);
        jiffies.clamp(1, max)
    }

    /// `sched_balance_domains` of `cpu` at `now`, from its tick: each domain bottom-up, when
    /// due, until a level where another CPU balances for its group. Returns when the next
    /// domain is due (`rq->next_balance`).
    pub(crate) fn sched_balance_domains<H: Hooks>(
        &mut self,
        cpu: usize,
        mut idle: CpuIdleType,
        h: &mut H,
    ) -> Ns {
        let (now, tick, hz) = (h.now(), self.tun.tick_ns, self.feat.hz as u64);
        let mut busy = idle != CpuIdleType::Idle;
        let mut next = now + 60 * hz * tick;
        let (mut need_decay, mut max_cost, mut continue_balancing) = (false, 0, true);
        for level in 0..self.topo.domains[cpu].len() {
            // The newly idle costs decay here, on every domain's regular visit.
            let sd = &mut self.topo.domains[cpu][level];
            need_decay = update_newidle_cost(sd, 0, now / tick, hz);
            max_cost += sd.max_newidle_lb_cost;
            if !continue_balancing {
                if need_decay {
                    continue;
                }
                break;
            }
            let mut interval =
                self.sd_balance_interval(&self.topo.domains[cpu][level], busy) * tick;
            if now >= self.topo.domains[cpu][level].last_balance + interval {
                let (moved, go_on) = self.sched_balance_rq(cpu, level, idle, h);
                if moved > 0 {
                    idle = if self.idle_cpu(cpu) {
                        CpuIdleType::Idle
                    } else {
                        CpuIdleType::NotIdle
                    };
                    busy = idle == CpuIdleType::NotIdle;
                }
                let sd = &mut self.topo.domains[cpu][level];
                sd.last_balance = now;
                interval = self.sd_balance_interval(&self.topo.domains[cpu][level], busy) * tick;
                next = next.min(now + interval);
                continue_balancing = go_on;
            } else {
                next = next.min(self.topo.domains[cpu][level].last_balance + interval);
            }
        }
        if need_decay {
            self.rqs[cpu].max_idle_balance_cost = max_cost.max(MIGRATION_COST_NS);
        }
        next
    }

    /// `sched_balance_newidle`: a CPU about to go idle pulls from its domains, bottom-up,
    /// while the root domain has a CPU with more than one task and the CPU is expected to
    /// stay idle longer than balancing takes (`avg_idle` against each domain's
    /// `max_newidle_lb_cost` and the cost so far); it stops at the first task pulled. True
    /// when one came. A domain's cost is the price of the work counted during its pass.
    /// Older kernels' gates: `fair.newidle_gate`.
    pub(crate) fn sched_balance_newidle<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        // The CPU's next idle balance: each domain's idle interval after its last one.
        let tick = self.tun.tick_ns;
        let now = h.now();
        let mut next = now + self.feat.hz as u64 * tick;
        for sd in &self.topo.domains[cpu] {
            next = next.min(sd.last_balance + self.sd_balance_interval(sd, false) * tick);
        }
        self.rqs[cpu].next_balance = self.rqs[cpu].next_balance.min(next);
        self.rqs[cpu].misfit_task_load = 0; // update_misfit_status(NULL): about to idle
        self.rqs[cpu].idle_stamp = Some(now);
        let avg_idle = self.rqs[cpu].avg_idle;
        let gate = self.feat.newidle_gate;
        let lowest = self.topo.domains[cpu].first();
        let skip = match gate {
            NewidleGate::Cost => {
                !self.rd_overloaded() || lowest.is_some_and(|sd| avg_idle < sd.max_newidle_lb_cost)
            }
            NewidleGate::MigrationCost => avg_idle < MIGRATION_COST_NS,
            NewidleGate::None => false,
        };
        if skip {
            return false;
        }
        let mut t0 = self.ops_cost_ns(cpu);
        self.sched_balance_update_blocked_averages(cpu, h);
        self.update_cpu_capacity(cpu, h);
        let (jiffies, mut curr_cost, mut pulled) = (now / tick, 0, false);
        for level in 0..self.topo.domains[cpu].len() {
            let sd = &self.topo.domains[cpu][level];
            if gate == NewidleGate::Cost && avg_idle < curr_cost + sd.max_newidle_lb_cost {
                break;
            }
            if sd.flags & SD_BALANCE_NEWIDLE != 0 {
                // NI_RANDOM, and whether NI_RATE counts time too.
                let ni_rate = (self.feat.has(Feat::NiRandom)).then(|| self.feat.has(Feat::NiRate));
                let mut weight = 1;
                if let Some(rate) = ni_rate {
                    let sd = &mut self.topo.domains[cpu][level];
                    match sd.newidle.throw(&mut self.rqs[cpu].rng, now, rate) {
                        Some(w) => weight = w,
                        None => continue,
                    }
                }
                let (moved, _) = self.sched_balance_rq(cpu, level, CpuIdleType::NewlyIdle, h);
                pulled = moved > 0;
                let t1 = self.ops_cost_ns(cpu);
                let cost = t1 - t0 + h.newidle_stall(cpu);
                let (hz, sd) = (self.feat.hz as u64, &mut self.topo.domains[cpu][level]);
                update_newidle_cost(sd, cost, jiffies, hz);
                // The kernel's `if (cost)` always holds (a pass takes time); a pass on the
                // idealized machine (overhead=off) costs 0 here and counts all the same.
                if let Some(rate) = ni_rate {
                    sd.newidle.update(weight * u32::from(pulled), now, rate);
                }
                (curr_cost, t0) = (curr_cost + cost, t1);
            }
            if pulled || self.nr_running(cpu) > 0 {
                pulled = true;
                break;
            }
        }
        let rq = &mut self.rqs[cpu];
        rq.max_idle_balance_cost = rq.max_idle_balance_cost.max(curr_cost);
        if pulled {
            rq.idle_stamp = None;
        }
        pulled
    }

    /// What `cpu`'s newly idle passes cost before the workload, `ns`: its domains'
    /// `max_newidle_lb_cost`, and its `max_idle_balance_cost` at least that (as
    /// `sched_balance_domains` keeps it). Simplified: every level the same.
    pub fn inherit_newidle_cost(&mut self, cpu: usize, ns: u64) {
        for sd in &mut self.topo.domains[cpu] {
            sd.max_newidle_lb_cost = ns;
        }
        let rq = &mut self.rqs[cpu];
        rq.max_idle_balance_cost = rq.max_idle_balance_cost.max(ns);
    }

    /// What the work counted on `cpu` so far costs (ns).
    fn ops_cost_ns(&self, cpu: usize) -> u64 {
        self.costs.price(self.ops.of(cpu))
    }

    /// `get_rd_overloaded` (6.1: `READ_ONCE(rd->overload)`).
    fn rd_overloaded(&self) -> bool {
        self.overloaded.get()
    }
}

/// `update_idle_cpu_scan`'s arithmetic: the CPUs to scan in an LLC of `llc_weight` CPUs
/// whose utilizations sum to `sum_util`: `llc_weight · (1 − (x · pct / 100)² / 1024²)` with
/// x the average utilization, in integers as the kernel computes it.
pub(crate) fn nr_idle_scan(sum_util: u64, llc_weight: u64, pct: u64) -> u32 {
    let x = sum_util / llc_weight;
    let tmp = (x * x * pct * pct / (10_000 * SCHED_CAPACITY_SCALE)).min(SCHED_CAPACITY_SCALE);
    ((SCHED_CAPACITY_SCALE - tmp) * llc_weight / SCHED_CAPACITY_SCALE) as u32
}

/// `update_newidle_cost`: a domain's newly idle cost is the most a pass took, decaying by
/// about 1% a second (253/256) when not beaten; true when it decayed.
fn update_newidle_cost(sd: &mut SchedDomain, cost: u64, jiffies: u64, hz: u64) -> bool {
    if cost > sd.max_newidle_lb_cost {
        sd.max_newidle_lb_cost = cost;
        sd.last_decay_max_lb_cost = jiffies;
    } else if jiffies > sd.last_decay_max_lb_cost + hz {
        sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
        sd.last_decay_max_lb_cost = jiffies;
        return true;
    }
    false
}

/// Where a CPU's `avg_idle` takes its sample of the idle stretch that ends
/// (`--set sched.avg_idle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AvgIdle {
    /// ≤ 6.19: `ttwu_do_activate`, when a task is woken onto the CPU.
    Wakeup,
    /// 7.0+: `put_prev_task_idle`, when the CPU stops being idle, however its task came
    /// (woken, forked, pulled), at the switch.
    IdleExit,
}

/// `update_rq_avg_idle` (7.0+; inline in `ttwu_do_activate` before): the idle stretch since
/// the CPU went newly idle, if it did, is `avg_idle`'s sample.
pub(crate) fn update_rq_avg_idle(rq: &mut Rq, gate: NewidleGate) {
    if let Some(stamp) = rq.idle_stamp.take() {
        let sample = rq.clock.clock_task - stamp;
        rq.avg_idle = update_avg_idle(rq.avg_idle, sample, rq.max_idle_balance_cost, gate);
    }
}

/// `avg_idle` after an idle stretch of `sample` ns (`update_rq_avg_idle`): 1/8 of the way to
/// each sample, at most twice the CPU's longest newly idle pass; ≤ 3.12 (before "sched:
/// Reduce overestimating rq->avg_idle") a sample above twice the migration cost sets it
/// there outright.
pub(crate) fn update_avg_idle(avg: u64, sample: u64, max_cost: u64, gate: NewidleGate) -> u64 {
    let ewma = (avg as i64 + (sample as i64 - avg as i64) / 8) as u64;
    match gate {
        NewidleGate::Cost => ewma.min(2 * max_cost),
        _ if sample > 2 * MIGRATION_COST_NS => 2 * MIGRATION_COST_NS,
        _ => ewma,
    }
}

#[cfg(test)]
mod tests;
