//! The engine's side of cpufreq: governors started at boot, the scheduler's hooks, and a
//! frequency change applied to everything it drives (work progress, PELT's frequency
//! scale, energy, the trace).

use super::engine::{Cpu, Engine};
use super::event::Ev;
use crate::cpufreq::cooling::Schedule;
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
    /// Each policy's caps, its cooling device's and its hardware throttle's: from each
    /// instant after the run's start, the frequency allowed (an OPP: a cooling state's).
    caps: Vec<[Vec<(Ns, u32)>; 2]>,
    pub stats: Vec<FreqStats>,
}

/// The policies a per-policy setting `key` names.
fn named<'a, T>(
    key: &'a str,
    per: &'a [(String, T)],
) -> impl Iterator<Item = (&'a str, &'a String)> {
    per.iter().map(move |(p, _)| (key, p))
}

impl Cpufreq {
    pub fn new(
        plat: &crate::platform::Platform,
        feat: &crate::sched::features::Features,
        now: Ns,
    ) -> Result<Cpufreq, InputError> {
        let tun = &feat.cpufreq;
        let err = |m: String| InputError::option("set", m);
        let governed = named("governor", &tun.per_policy);
        let capped = named("scaling_max_freq", &tun.per_policy_max_freq);
        let cooled = named("cooling_max_freq", &tun.per_policy_cooling);
        let throttled = named("hw_max_freq", &tun.per_policy_hw);
        for (key, p) in governed.chain(capped).chain(cooled).chain(throttled) {
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
            caps: Vec::new(),
            stats: Vec::new(),
        };
        for d in &plat.freq_domains {
            let pol = Policy::new(d, feat.tick_ns(), tun.max_freq_of(&d.name));
            let g = tun.governor_of(&d.name);
            let gov = governor(g, tun, &pol).map_err(|m| err(format!("policy {}: {m}", d.name)))?;
            cf.hooked.push(gov.update_util_hook());
            // get_state_freq: a cooling state's frequency is an OPP, the cap's or the lowest
            let opp = |khz: u32| {
                let mut below = pol.freqs.iter().rev().filter(|&&f| f <= khz);
                *below.next().unwrap_or(&pol.freqs[0])
            };
            let steps = |s: &Schedule| s.0.iter().map(|&(at, khz)| (at, opp(khz))).collect();
            cf.caps.push(tun.caps_of(&d.name).map(steps));
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

    /// The run's caps, each an event at its instant.
    pub(super) fn start_caps(&mut self) {
        for d in 0..self.cpufreq.caps.len() {
            self.queue_cap(d, 0, false);
            self.queue_cap(d, 0, true);
        }
    }

    fn queue_cap(&mut self, d: usize, step: usize, hw: bool) {
        if let Some(&(at, _)) = self.cpufreq.caps[d][hw as usize].get(step) {
            let (policy, step) = (d as u16, step as u16);
            let ev = Ev::Cap { policy, step, hw };
            self.queue.push(super::SIM_START + at, self.now, ev);
        }
    }

    /// A cap of policy `d` from now: its cooling device's (`cpufreq_set_cur_state`), a
    /// frequency QoS limit with `scaling_max_freq` (the lower one), which ≤6.9 also sets
    /// its CPUs' thermal pressure and 6.10+ makes the limit's cpufreq pressure
    /// (`cpufreq_set_policy`); or its hardware throttle's (`hw`), which its driver reports
    /// as their hw (≤6.9: thermal) pressure. The governor applies the new limits.
    /// Simplified: the throttle is a limit of the policy too, its governor's requests
    /// clamped to it, so that PELT's frequency scale follows the throttled frequency (as
    /// frequency counters report it).
    pub(super) fn cap(&mut self, s: &mut Sched, d: usize, step: usize, hw: bool) {
        let khz = self.cpufreq.caps[d][hw as usize][step].1;
        let pol = &mut self.cpufreq.policies[d];
        match hw {
            true => pol.hw_max = khz,
            false => pol.cooling_max = khz,
        }
        let qos = pol.scaling_max.min(pol.cooling_max);
        pol.max = qos.min(pol.hw_max);
        if hw || !s.feat().cpufreq_pressure {
            s.update_hw_pressure(&pol.cpus, khz, pol.cpuinfo_max());
        } else {
            s.cpufreq_update_pressure(&pol.cpus, qos, pol.cpuinfo_max());
        }
        if let Some(khz) = self.cpufreq.governors[d].limits(&self.cpufreq.policies[d]) {
            self.set_freq(s, d, khz);
        }
        self.queue_cap(d, step + 1, hw);
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
