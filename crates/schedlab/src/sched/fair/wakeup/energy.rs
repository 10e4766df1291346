//! Energy-aware placement (`find_energy_efficient_cpu`, fair.c, 6.12; 6.1 takes the same
//! decisions): in each perf domain, the allowed CPU with the most spare capacity, and prev,
//! are candidates; the Energy Model prices the domain with and without the task on each
//! (`compute_energy`), and the cheapest candidate that fits wins over prev.

use crate::cpufreq::schedutil::cpu_perf;
use crate::energy::em::em_cpu_energy;
use crate::sched::explain::About;
use crate::sched::fair::capacity::{get_actual_cpu_capacity, task_util_est, util_fits_cpu};
use crate::sched::pelt::SCHED_CAPACITY_SCALE;
use crate::sched::topology::perf_domain::PerfDomain;
use crate::sched::uclamp::{UCLAMP_MAX, UCLAMP_MIN};
use crate::sched::Sched;
use smallvec::smallvec;

/// `struct energy_env`: the task's busy time, its perf domain's without it, one CPU's
/// capacity and the domain's.
#[derive(Default)]
struct EnergyEnv {
    task_busy_time: u64,
    pd_busy_time: u64,
    cpu_cap: u64,
    pd_cap: u64,
}

/// A placement `find_energy_efficient_cpu` weighs: the energy it adds, how the task fits
/// (1, or −1 when only its util_min is not met) and the CPU's capacity.
#[derive(Clone, Copy)]
struct Choice {
    delta: u64,
    fits: i32,
    cap: u64,
}

impl Choice {
    const NONE: Choice = Choice {
        delta: u64::MAX,
        fits: -1,
        cap: 0,
    };
}

impl Sched {
    /// `find_energy_efficient_cpu` from the waker's CPU `this`: None without an asymmetric
    /// domain of `this` spanning prev.
    pub(super) fn find_energy_efficient_cpu(
        &mut self,
        p: u32,
        this: usize,
        prev: usize,
    ) -> Option<usize> {
        let first = self.topo.cache[this].asym_cpucapacity?;
        let doms = &self.topo.domains[this];
        let level = (first..doms.len()).find(|&l| doms[l].span.binary_search(&prev).is_ok())?;
        self.sync_entity_load_avg(p);
        Some(self.feec(p, this, level, prev))
    }

    /// The search itself, in `this`'s domain `level`.
    fn feec(&self, p: u32, this: usize, level: usize, prev: usize) -> usize {
        let t = &self.tasks[p as usize];
        let (p_min, p_max) = self.task_clamps(p);
        let task_util = task_util_est(&self.ses[t.se as usize]);
        if task_util == 0 && p_min == 0 {
            return prev;
        }
        let span = &self.topo.domains[this][level].span;
        let mut eenv = EnergyEnv {
            task_busy_time: task_util, // scale_irq_capacity: schedlab has no IRQ time
            ..EnergyEnv::default()
        };
        let (mut prev_choice, mut best, mut best_cpu) = (Choice::NONE, Choice::NONE, prev);
        for pd in &self.pd {
            // Its pressure counted for the energy estimation.
            eenv.cpu_cap = get_actual_cpu_capacity(&self.rqs[pd.cpus[0]]);
            eenv.pd_cap = eenv.cpu_cap * pd.cpus.len() as u64;
            let (mut umin, mut umax) = (p_min, p_max);
            let (mut prev_spare, mut max_spare, mut max_fits) = (-1i64, -1i64, -1);
            let mut max_spare_cpu = None;
            for &cpu in &pd.cpus {
                if span.binary_search(&cpu).is_err() || !t.cpus_mask[cpu] {
                    continue;
                }
                let util = self.cpu_util_moved(cpu, p, Some(cpu), false);
                let rq = &self.rqs[cpu];
                if self.uclamp_used && !rq.uclamp.is_idle() {
                    // Max-aggregated clamps, kept for the domain's next CPUs as the kernel does.
                    umin = p_min.max(rq.uclamp.get(UCLAMP_MIN) as u64);
                    umax = p_max.max(rq.uclamp.get(UCLAMP_MAX) as u64);
                }
                let cap = rq.cpu_capacity;
                let fits = util_fits_cpu(util, umin, umax, rq, self.uclamp_used);
                if fits == 0 {
                    continue; // it would overutilize the CPU
                }
                let spare = cap.saturating_sub(util) as i64;
                if cpu == prev {
                    (prev_spare, prev_choice.fits) = (spare, fits);
                } else if fits > max_fits || (fits == max_fits && spare > max_spare) {
                    (max_spare, max_spare_cpu, max_fits) = (spare, Some(cpu), fits);
                }
            }
            if max_spare_cpu.is_none() && prev_spare < 0 {
                continue;
            }
            eenv.pd_busy_time = self.pd_busy_time(pd, p, eenv.pd_cap);
            let base = self.compute_energy(&eenv, pd, p, None);
            if prev_spare > -1 {
                let Some(delta) = self
                    .compute_energy(&eenv, pd, p, Some(prev))
                    .checked_sub(base)
                else {
                    return prev; // the CPUs' utilization changed meanwhile
                };
                self.note_energy(prev, delta, prev_spare, prev_choice.fits);
                (prev_choice.delta, prev_choice.cap) = (delta, eenv.cpu_cap);
                best.delta = best.delta.min(delta);
            }
            let Some(cpu) = max_spare_cpu.filter(|_| max_spare > prev_spare) else {
                continue;
            };
            if max_fits < best.fits || (max_fits < 0 && eenv.cpu_cap <= best.cap) {
                continue; // the best so far fits better, or has more capacity
            }
            let Some(delta) = self
                .compute_energy(&eenv, pd, p, Some(cpu))
                .checked_sub(base)
            else {
                return prev;
            };
            self.note_energy(cpu, delta, max_spare, max_fits);
            if max_fits > 0 && best.fits > 0 && delta >= best.delta {
                continue;
            }
            best = Choice {
                delta,
                fits: max_fits,
                cap: eenv.cpu_cap,
            };
            best_cpu = cpu;
        }
        let better = best.fits > prev_choice.fits
            || (best.fits > 0 && best.delta < prev_choice.delta)
            || (best.fits < 0 && best.cap > prev_choice.cap);
        if better {
            best_cpu
        } else {
            prev
        }
    }

    /// For `compare --explain`: a candidate's energy delta, spare capacity and fit.
    fn note_energy(&self, cpu: usize, delta: u64, spare: i64, fits: i32) {
        self.note("find_energy_efficient_cpu", || {
            let values = smallvec![
                ("energy_delta", delta as i64),
                ("spare_cap", spare),
                ("fits", fits as i64)
            ];
            (About::Cpu(cpu), values)
        });
    }

    /// The task's effective util_min and util_max (none without uclamp).
    fn task_clamps(&self, p: u32) -> (u64, u64) {
        if !self.uclamp_used {
            return (0, SCHED_CAPACITY_SCALE);
        }
        let u = &self.tasks[p as usize].uclamp;
        (u[UCLAMP_MIN].value as u64, u[UCLAMP_MAX].value as u64)
    }

    /// `eenv_pd_busy_time`: the domain's CPUs' busy time without the task
    /// (`effective_cpu_util` of each), at most the domain's capacity.
    fn pd_busy_time(&self, pd: &PerfDomain, p: u32, pd_cap: u64) -> u64 {
        let busy = pd.cpus.iter().map(|&cpu| {
            let rq = &self.rqs[cpu];
            let util = self.cpu_util_moved(cpu, p, None, false);
            (util + rq.avg_rt.util_avg + rq.avg_dl.util_avg).min(rq.capacity)
        });
        busy.sum::<u64>().min(pd_cap)
    }

    /// `compute_energy`: the domain's energy with the task on `dst` (None: without it), at
    /// the OPP its busiest CPU would ask schedutil for (`eenv_pd_max_util`).
    fn compute_energy(&self, eenv: &EnergyEnv, pd: &PerfDomain, p: u32, dst: Option<usize>) -> u64 {
        let max_util = pd.cpus.iter().map(|&cpu| self.eenv_cpu_perf(cpu, p, dst));
        let max_util = max_util.max().unwrap_or(0).min(eenv.cpu_cap);
        let busy = match dst {
            Some(_) => (eenv.pd_busy_time + eenv.task_busy_time).min(eenv.pd_cap),
            None => eenv.pd_busy_time,
        };
        em_cpu_energy(&pd.table, max_util, busy, eenv.cpu_cap)
    }

    /// One CPU's term of `eenv_pd_max_util`: `sugov_effective_cpu_perf` of its runnable
    /// boosted utilization with the task on `dst`, whose clamps join the CPU's there.
    fn eenv_cpu_perf(&self, cpu: usize, p: u32, dst: Option<usize>) -> u64 {
        let mut s = self.cpufreq_sample(cpu, self.cpu_util_moved(cpu, p, dst, true));
        if dst == Some(cpu) && self.uclamp_used {
            let (p_min, p_max) = self.task_clamps(p);
            s.uclamp_min = s.uclamp_min.max(p_min);
            s.uclamp_max = match self.rqs[cpu].uclamp.is_idle() {
                true => p_max,
                false => s.uclamp_max.max(p_max),
            };
        }
        cpu_perf(&s)
    }
}
