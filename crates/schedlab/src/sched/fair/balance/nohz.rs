//! NOHZ idle balancing (fair.c, 6.12): idle CPUs do not tick, so a busy CPU's tick kicks one
//! of them (`nohz_balancer_kick`), which decays the blocked load of every idle CPU
//! (`NOHZ_STATS_KICK`) and balances on behalf of those whose balance is due
//! (`NOHZ_BALANCE_KICK`, `_nohz_idle_balance`); a stats-only kick comes every
//! LOAD_AVG_PERIOD (32 ms) while idle CPUs have blocked load. Simplified: the kick's IPI
//! and softirq take no time; a CPU going idle does not ask for a stats kick itself
//! (`nohz_newidle_balance`).

use super::stats::CpuIdleType;
use crate::sched::hooks::Hooks;
use crate::sched::topology::{SD_ASYM_CPUCAPACITY, SD_SHARE_LLC};
use crate::sched::Sched;
use crate::time::Ns;

const NSEC_PER_MSEC: u64 = 1_000_000;

impl Sched {
    /// `nohz_balancer_kick` from busy CPU `cpu`'s tick: with an idle CPU and the idle balance
    /// due, kick one when this CPU has more than one task, or a fair task on reduced
    /// capacity, or a misfit (with asymmetric capacities), or (without them) its LLC more
    /// than one busy CPU.
    pub(crate) fn nohz_balancer_kick<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        let now = h.now();
        if self.idle_cpu(cpu) {
            return;
        }
        let stats = self.nohz_has_blocked && now > self.nohz_next_blocked;
        let Some(ilb) = (0..self.rqs.len()).find(|&c| c != cpu && self.idle_cpu(c)) else {
            return;
        };
        if now < self.nohz_next_balance {
            if stats {
                self.nohz_idle_balance(ilb, false, h);
            }
            return;
        }
        let doms = &self.topo.domains[cpu];
        let asym = doms.iter().any(|sd| sd.flags & SD_ASYM_CPUCAPACITY != 0);
        // check_misfit_status: a misfit here, and a bigger CPU or a reduced capacity.
        let misfit = || {
            let rq = &self.rqs[cpu];
            rq.misfit_task_load > 0
                && (self.rqs.iter().any(|r| r.capacity > rq.capacity)
                    || doms
                        .first()
                        .is_some_and(|sd| self.check_cpu_capacity(cpu, sd)))
        };
        let kick = self.nr_running(cpu) >= 2
            || doms.first().is_some_and(|sd| {
                self.lb_h_nr_running(cpu) >= 1 && self.check_cpu_capacity(cpu, sd)
            })
            || (asym && misfit())
            || (!asym
                && doms
                    .iter()
                    .rev()
                    .find(|sd| sd.flags & SD_SHARE_LLC != 0)
                    .is_some_and(|llc| {
                        llc.span.iter().filter(|&&c| !self.idle_cpu(c)).count() > 1
                    }));
        if kick {
            self.nohz_next_balance += self.tun.tick_ns; // kick_ilb: nohz.next_balance++
        }
        if kick || stats {
            self.nohz_idle_balance(ilb, kick, h);
        }
    }

    /// `_nohz_idle_balance` on `ilb`: from the CPU after it round to itself, each idle CPU's
    /// blocked load decays (`update_nohz_stats`) and, on a balance kick, one whose balance is
    /// due balances its domains as an idle CPU; stop once `ilb` has work.
    fn nohz_idle_balance<H: Hooks>(&mut self, ilb: usize, balance: bool, h: &mut H) {
        let (now, n) = (h.now(), self.rqs.len());
        let mut next = Ns::MAX;
        self.nohz_has_blocked = false;
        let mut has_blocked = false;
        for cpu in (1..=n).map(|i| (ilb + i) % n) {
            if !self.idle_cpu(cpu) {
                continue;
            }
            if !self.idle_cpu(ilb) {
                self.nohz_has_blocked = true; // need_resched: abort
                return;
            }
            has_blocked |= self.update_nohz_stats(cpu, h);
            if balance && now >= self.rqs[cpu].next_balance {
                self.update_rq_clock(cpu, now);
                self.rqs[cpu].next_balance = self.sched_balance_domains(cpu, CpuIdleType::Idle, h);
            }
            next = next.min(self.rqs[cpu].next_balance);
        }
        if balance && next != Ns::MAX {
            self.nohz_next_balance = next;
        }
        // msecs_to_jiffies(LOAD_AVG_PERIOD): 32 ms, rounded up to whole ticks.
        self.nohz_next_blocked =
            now + (32 * NSEC_PER_MSEC).div_ceil(self.tun.tick_ns) * self.tun.tick_ns;
        self.nohz_has_blocked |= has_blocked;
    }
}
