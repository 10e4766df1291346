//! The engine's side of cpufreq: governors started at boot, the scheduler's hooks, and a
//! frequency change applied to everything it drives (work progress, PELT's frequency
//! scale, energy, the trace).

use super::engine::{Cpu, Engine};
use super::event::Ev;
use crate::cpufreq::{governor, CpuSample, Governor, Hook, Policy};
use crate::error::InputError;
use crate::sched::task::TaskState;
use crate::sched::Sched;
use crate::time::Ns;
use crate::tracepoint::Tracepoint;

/// Time spent at each OPP of a policy, and the number of changes.
#[derive(Debug, Clone)]
pub struct FreqStats {
    pub residency: Vec<Ns>,
    pub transitions: u64,
    /// When the current OPP's time started to count.
    pub(super) since: Ns,
}

/// The policies of a platform, their governors and statistics.
pub struct Cpufreq {
    pub policies: Vec<Policy>,
    pub names: Vec<String>,
    pub governor_names: Vec<&'static str>,
    governors: Vec<Box<dyn Governor>>,
    /// Each policy's governor hooks `cpufreq_update_util`.
    hooked: Vec<bool>,
    /// Each policy's cooling device caps: from each instant after the run's start, the
    /// frequency allowed (a cooling state's: an OPP).
    cooling: Vec<Vec<(Ns, u32)>>,
    pub stats: Vec<FreqStats>,
}

impl Cpufreq {
    pub fn new(
        plat: &crate::platform::Platform,
        feat: &crate::sched::features::Features,
        now: Ns,
    ) -> Result<Cpufreq, InputError> {
        let tun = &feat.cpufreq;
        let err = |m: String| InputError::option("set", m);
        let governed = tun.per_policy.iter().map(|(p, _)| ("governor", p));
        let capped = tun
            .per_policy_max_freq
            .iter()
            .map(|(p, _)| ("scaling_max_freq", p));
        let cooled = tun
            .per_policy_cooling
            .iter()
            .map(|(p, _)| ("cooling_max_freq", p));
        for (key, p) in governed.chain(capped).chain(cooled) {
            if !plat.freq_domains.iter().any(|d| &d.name == p) {
                let names: Vec<&str> = plat.freq_domains.iter().map(|d| d.name.as_str()).collect();
                return Err(err(format!(
                    "cpufreq.{key}.{p}: {} has no policy {p:?}; its policies: {}",
                    plat.name,
                    names.join(", ")
                )));
            }
        }
        let mut cf = Cpufreq {
            policies: Vec::new(),
            names: Vec::new(),
            governor_names: Vec::new(),
            governors: Vec::new(),
            hooked: Vec::new(),
            cooling: Vec::new(),
            stats: Vec::new(),
        };
        for d in &plat.freq_domains {
            let pol = Policy::new(d, feat.tick_ns(), tun.max_freq_of(&d.name));
            let g = tun.governor_of(&d.name);
            let gov = governor(g, tun, &pol).map_err(|m| err(format!("policy {}: {m}", d.name)))?;
            cf.hooked.push(gov.update_util_hook());
            // get_state_freq: a cooling state's frequency is an OPP, the cap's or the lowest
            let caps = &tun.cooling_of(&d.name).0;
            let opp = |khz: u32| {
                *pol.freqs
                    .iter()
                    .rev()
                    .find(|&&f| f <= khz)
                    .unwrap_or(&pol.freqs[0])
            };
            cf.cooling
                .push(caps.iter().map(|&(at, khz)| (at, opp(khz))).collect());
            cf.governors.push(gov);
            cf.stats.push(FreqStats {
                residency: vec![0; pol.freqs.len()],
                transitions: 0,
                since: now,
            });
            cf.governor_names.push(g.name());
            cf.names.push(d.name.clone());
            cf.policies.push(pol);
        }
        Ok(cf)
    }

    /// Charge the time at the current OPP up to `now`.
    fn settle(&mut self, d: usize, now: Ns) {
        let p = &self.policies[d];
        let i = p
            .freqs
            .iter()
            .position(|&f| f == p.cur)
            .expect("cur is an OPP");
        let s = &mut self.stats[d];
        s.residency[i] += now - s.since;
        s.since = now;
    }

    pub fn finish(&mut self, now: Ns) {
        for d in 0..self.policies.len() {
            self.settle(d, now);
        }
    }
}

/// What a governor reads of CPU `cpu` at `now`: the scheduler's signals and the CPU's idle
/// time and entries.
fn cpu_sample(s: &Sched, cpus: &[Cpu], now: Ns, cpu: usize) -> CpuSample {
    let c = &cpus[cpu];
    let busy = c.busy_at(now);
    CpuSample {
        idle_ns: (now - super::SIM_START) - busy,
        idle_calls: c.idle_calls,
        ..s.cpufreq_util(cpu)
    }
}

impl Engine {
    /// Boot: each governor takes its policy over; the frequency it picks is the first.
    pub(super) fn start_governors(&mut self, s: &mut Sched) {
        let now = self.now;
        for d in 0..self.cpufreq.policies.len() {
            let cpus = &self.cpus;
            let sample = |j: usize| cpu_sample(s, cpus, now, j);
            let cf = &mut self.cpufreq;
            let khz = cf.governors[d].start(&cf.policies[d], now, &sample);
            let pol = &cf.policies[d];
            if s.feat().cpufreq_pressure {
                s.cpufreq_update_pressure(&pol.cpus, pol.max, pol.cpuinfo_max());
            }
            self.apply_freq(s, d, khz);
        }
    }

    /// The run's cooling caps, each an event at its instant.
    pub(super) fn start_cooling(&mut self) {
        for d in 0..self.cpufreq.cooling.len() {
            self.queue_cooling(d, 0);
        }
    }

    fn queue_cooling(&mut self, d: usize, step: usize) {
        if let Some(&(at, _)) = self.cpufreq.cooling[d].get(step) {
            let ev = Ev::Cooling {
                policy: d as u16,
                step: step as u16,
            };
            self.queue.push(super::SIM_START + at, self.now, ev);
        }
    }

    /// `cpufreq_set_cur_state` of policy `d`'s cooling device: its cap becomes a limit of
    /// the policy (with `scaling_max_freq`, the lower one); ≤6.9 it also sets its CPUs'
    /// thermal pressure, 6.10+ the limit's cpufreq pressure (`cpufreq_set_policy`); the
    /// governor applies the new limits.
    pub(super) fn cooling(&mut self, s: &mut Sched, d: usize, step: usize) {
        let khz = self.cpufreq.cooling[d][step].1;
        let pol = &mut self.cpufreq.policies[d];
        pol.max = pol.scaling_max.min(khz);
        if s.feat().cpufreq_pressure {
            s.cpufreq_update_pressure(&pol.cpus, pol.max, pol.cpuinfo_max());
        } else {
            s.update_thermal_pressure(&pol.cpus, khz, pol.cpuinfo_max());
        }
        if let Some(khz) = self.cpufreq.governors[d].limits(&self.cpufreq.policies[d]) {
            self.set_freq(s, d, khz);
        }
        self.queue_cooling(d, step + 1);
    }

    /// `cpufreq_update_util` on `cpu`: its policy's governor may pick a new frequency.
    pub(super) fn cpufreq_hook(&mut self, s: &mut Sched, cpu: usize, hook: Hook) {
        let d = self.plat.cpus[cpu].freq_domain;
        if !self.cpufreq.hooked[d] {
            return;
        }
        let now = self.now;
        let cpus = &self.cpus;
        let sample = |j: usize| cpu_sample(s, cpus, now, j);
        let cf = &mut self.cpufreq;
        if let Some(khz) = cf.governors[d].update(&cf.policies[d], cpu, hook, now, &sample) {
            self.set_freq(s, d, khz);
        }
    }

    /// A frequency transition of policy `d`.
    fn set_freq(&mut self, s: &mut Sched, d: usize, khz: u32) {
        if khz == self.cpufreq.policies[d].cur {
            return;
        }
        self.cpufreq.settle(d, self.now);
        self.cpufreq.stats[d].transitions += 1;
        s.explain_frequency(&self.cpufreq.policies[d].cpus, self.now, khz);
        self.apply_freq(s, d, khz);
    }

    /// Policy `d` runs at `khz` from now: running work is charged at the old speed first.
    fn apply_freq(&mut self, s: &mut Sched, d: usize, khz: u32) {
        let pol = &mut self.cpufreq.policies[d];
        pol.cur = khz;
        let (max, opp) = (
            pol.cpuinfo_max(),
            pol.freqs.iter().position(|&f| f == khz).expect("an OPP"),
        );
        self.energy.set_opp(d, opp, self.now);
        for i in 0..self.cpufreq.policies[d].cpus.len() {
            let cpu = self.cpufreq.policies[d].cpus[i];
            s.set_freq_scale(cpu, ((khz as u64) << 10) / max as u64, self.now); // arch_freq_scale
            let running = s
                .cpu_rq(cpu)
                .curr
                .filter(|&t| s.task(t).state == TaskState::Running);
            if let Some(t) = running {
                self.progress(s, t, cpu);
            }
            self.cpus[cpu].rate = s.cpu_rq(cpu).capacity as u128 * 1024 * khz as u128 / max as u128;
            if running.is_some() {
                self.arm_done(s, cpu);
            }
            if self.tracing && !self.booting {
                self.emit(s.tasks(), &Tracepoint::CpuFrequency { cpu, khz });
            }
        }
    }
}
