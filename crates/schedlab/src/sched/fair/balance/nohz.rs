//! NOHZ idle balancing (fair.c, 6.12): idle CPUs do not tick, so a busy CPU's tick kicks one
//! of them (`nohz_balancer_kick`), which balances on behalf of every idle CPU whose
//! balance is due (`_nohz_idle_balance`). Simplified: the kick's IPI and softirq take no
//! time; no blocked-load-only (`NOHZ_STATS_KICK`) passes.

use super::stats::CpuIdleType;
use crate::sched::hooks::Hooks;
use crate::sched::topology::{SD_ASYM_CPUCAPACITY, SD_SHARE_LLC};
use crate::sched::Sched;
use crate::time::Ns;

impl Sched {
    /// `nohz_balancer_kick` from busy CPU `cpu`'s tick: with an idle CPU and the idle balance
    /// due, kick one when this CPU has more than one task, or a fair task on reduced
    /// capacity, or a misfit (with asymmetric capacities), or (without them) its LLC more
    /// than one busy CPU.
    pub(crate) fn nohz_balancer_kick<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        let now = h.now();
        if self.idle_cpu(cpu) || now < self.nohz_next_balance {
            return;
        }
        let Some(ilb) = (0..self.rqs.len()).find(|&c| c != cpu && self.idle_cpu(c)) else {
            return;
        };
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
                self.cfs_rqs[cpu].h_nr_queued >= 1 && self.check_cpu_capacity(cpu, sd)
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
            self.nohz_idle_balance(ilb, h);
        }
    }

    /// `_nohz_idle_balance` on `ilb`: from the CPU after it round to itself, each idle CPU
    /// whose balance is due balances its domains as an idle CPU; stop once `ilb` has work.
    fn nohz_idle_balance<H: Hooks>(&mut self, ilb: usize, h: &mut H) {
        let (now, n) = (h.now(), self.rqs.len());
        let mut next = Ns::MAX;
        for cpu in (1..=n).map(|i| (ilb + i) % n) {
            if !self.idle_cpu(cpu) {
                continue;
            }
            if !self.idle_cpu(ilb) {
                return; // need_resched: abort
            }
            if now >= self.rqs[cpu].next_balance {
                self.update_rq_clock(cpu, now);
                self.rqs[cpu].next_balance = self.sched_balance_domains(cpu, CpuIdleType::Idle, h);
            }
            next = next.min(self.rqs[cpu].next_balance);
        }
        if next != Ns::MAX {
            self.nohz_next_balance = next;
        }
    }
}
