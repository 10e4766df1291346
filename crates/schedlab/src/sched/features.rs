//! Kernel behaviour as data: a preset per kernel version, overridden by `--set KEY=VALUE`
//! and `--feature NAME|NO_NAME` (kernel/sched/features.h and the sysctls).

use crate::cpufreq;
use crate::error::InputError;
use crate::kernel::Kernel;
use crate::sched::clock_pelt::Invariance;
use crate::sched::deadline::grub::Grub;
use crate::sched::util_est::UtilEstForm;

/// The fair class's pick policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FairPolicy {
    /// EEVDF, Linux 6.6+ (6.12 reference).
    Eevdf,
    /// CFS, Linux ≤ 6.5 (6.1 reference).
    Cfs,
}

/// `sysctl_sched_tunable_scaling`: how the fair tunables grow with the CPU count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunableScaling {
    None,
    Log,
    Linear,
}

/// The `SCHED_FEAT` switches schedlab models, in features.h order.
pub const FEATURE_NAMES: [&str; 16] = [
    "GENTLE_FAIR_SLEEPERS",
    "START_DEBIT",
    "PLACE_LAG",
    "PLACE_DEADLINE_INITIAL",
    "PLACE_REL_DEADLINE",
    "RUN_TO_PARITY",
    "PREEMPT_SHORT",
    "NEXT_BUDDY",
    "PICK_BUDDY",
    "LAST_BUDDY",
    "DELAY_DEQUEUE",
    "DELAY_ZERO",
    "WAKEUP_PREEMPTION",
    "UTIL_EST",
    "ALT_PERIOD",
    "BASE_SLICE",
];

/// Index of a feature in [`FEATURE_NAMES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Feat {
    GentleFairSleepers,
    StartDebit,
    PlaceLag,
    PlaceDeadlineInitial,
    PlaceRelDeadline,
    RunToParity,
    PreemptShort,
    NextBuddy,
    PickBuddy,
    LastBuddy,
    DelayDequeue,
    DelayZero,
    WakeupPreemption,
    UtilEst,
    AltPeriod,
    BaseSlice,
}

/// Every tunable of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    pub kernel: Kernel,
    pub fair: FairPolicy,
    pub invariance: Invariance,
    pub util_est: UtilEstForm,
    pub hz: u32,
    pub tunable_scaling: TunableScaling,
    /// Normalised (one-CPU) values, scaled at boot by [`Features::factor`].
    pub base_slice_ns: u64,
    pub latency_ns: u64,
    pub min_granularity_ns: u64,
    pub wakeup_granularity_ns: u64,
    /// Governors and their tunables.
    pub cpufreq: cpufreq::Tunables,
    /// SCHED_DEADLINE's reclaiming equation.
    pub grub: Grub,
    /// `sched_rt_period_us` and `sched_rt_runtime_us` (None: −1, unlimited): RT throttling
    /// (6.1) and the deadline class's Umax and admission limit.
    pub rt_period_us: u64,
    pub rt_runtime_us: Option<u64>,
    /// RT throttling of the root rt_rq (≤ 6.11; 6.12 has the fair server instead).
    pub rt_throttling: bool,
    /// `sched_rr_timeslice_ms`.
    pub rr_timeslice_ms: u32,
    /// debugfs `fair_server/cpuN/{runtime,period}` (ns; runtime 0: no fair server, as ≤ 6.11).
    pub fair_server_runtime_ns: u64,
    pub fair_server_period_ns: u64,
    bits: u32,
}

/// `--set` keys, their meaning, and how each preset sets them.
pub const SET_KEYS: [(&str, &str); 16] = [
    (
        "rt.throttling",
        "on (6.1: the root rt_rq's bandwidth) | off (6.12)",
    ),
    (
        "rt.rr_timeslice_ms",
        "sched_rr_timeslice_ms: SCHED_RR slice, > 0",
    ),
    (
        "dl.grub",
        "classic (<6.5) | pillai-2023 (seed 004) | mainline (6.5+)",
    ),
    (
        "dl.fair_server_runtime_ns",
        "fair server budget per CPU: 0 (none, 6.1) .. period (6.12: 50000000)",
    ),
    (
        "dl.fair_server_period_ns",
        "fair server period: 100000 .. 4194304000 (1000000000)",
    ),
    ("sched.rt_period_us", "sched_rt_period_us: 1 .. 2^31-1"),
    (
        "sched.rt_runtime_us",
        "sched_rt_runtime_us: -1 (unlimited) | 0 .. sched_rt_period_us",
    ),
    ("fair.policy", "eevdf | cfs"),
    ("pelt.invariance", "clock_pelt | legacy"),
    ("util_est.form", "ewma (6.8+) | enqueued_ewma (≤6.7)"),
    ("hz", "tick rate: 100 | 250 | 300 | 1000"),
    (
        "sched.tunable_scaling",
        "none | log | linear (sysctl_sched_tunable_scaling)",
    ),
    (
        "fair.base_slice_ns",
        "EEVDF base slice, normalised (sysctl_sched_base_slice)",
    ),
    ("fair.latency_ns", "CFS sched_latency, normalised"),
    ("fair.min_granularity_ns", "CFS min_granularity, normalised"),
    (
        "fair.wakeup_granularity_ns",
        "CFS wakeup_granularity, normalised",
    ),
];

impl Features {
    /// The coherent defaults of a kernel version.
    pub fn preset(kernel: Kernel) -> Features {
        let on_6_12 = [
            Feat::GentleFairSleepers,
            Feat::StartDebit,
            Feat::PlaceLag,
            Feat::PlaceDeadlineInitial,
            Feat::PlaceRelDeadline,
            Feat::RunToParity,
            Feat::PreemptShort,
            Feat::PickBuddy,
            Feat::DelayDequeue,
            Feat::DelayZero,
            Feat::WakeupPreemption,
            Feat::UtilEst,
        ];
        let on_6_1 = [
            Feat::GentleFairSleepers,
            Feat::StartDebit,
            Feat::LastBuddy,
            Feat::WakeupPreemption,
            Feat::UtilEst,
            Feat::AltPeriod,
            Feat::BaseSlice,
        ];
        let (fair, on): (FairPolicy, &[Feat]) = match kernel {
            Kernel::V6_12 => (FairPolicy::Eevdf, &on_6_12),
            Kernel::V6_1 => (FairPolicy::Cfs, &on_6_1),
        };
        Features {
            kernel,
            fair,
            invariance: Invariance::ClockPelt,
            util_est: kernel.util_est(),
            hz: 250,
            tunable_scaling: TunableScaling::Log,
            base_slice_ns: 700_000,
            latency_ns: 6_000_000,
            min_granularity_ns: 750_000,
            wakeup_granularity_ns: 1_000_000,
            cpufreq: cpufreq::Tunables::default(),
            grub: match kernel {
                Kernel::V6_12 => Grub::Mainline,
                Kernel::V6_1 => Grub::Classic,
            },
            rt_period_us: 1_000_000,
            rt_runtime_us: Some(950_000),
            rt_throttling: kernel == Kernel::V6_1,
            rr_timeslice_ms: 100,
            fair_server_runtime_ns: match kernel {
                Kernel::V6_12 => 50_000_000,
                Kernel::V6_1 => 0,
            },
            fair_server_period_ns: 1_000_000_000,
            bits: on.iter().fold(0, |b, f| b | 1 << *f as u32),
        }
    }

    #[inline(always)]
    pub fn has(&self, f: Feat) -> bool {
        self.bits & (1 << f as u32) != 0
    }

    /// `--feature NAME` or `--feature NO_NAME`.
    pub fn set_feature(&mut self, spec: &str) -> Result<(), InputError> {
        let (name, on) = match spec.strip_prefix("NO_") {
            Some(n) => (n, false),
            None => (spec, true),
        };
        let i = FEATURE_NAMES
            .iter()
            .position(|n| *n == name)
            .ok_or_else(|| {
                InputError::new(
                    "--feature",
                    format!("unknown feature {name:?}; `schedlab features` lists them"),
                )
            })?;
        if on {
            self.bits |= 1 << i;
        } else {
            self.bits &= !(1 << i);
        }
        Ok(())
    }

    /// `--set KEY=VALUE`.
    pub fn set(&mut self, spec: &str) -> Result<(), InputError> {
        let err = |m: String| InputError::new("--set", m);
        let (key, value) = spec
            .split_once('=')
            .ok_or_else(|| err(format!("{spec:?} is not KEY=VALUE")))?;
        let bad = || {
            err(format!(
                "{key}={value:?}: expected {}",
                SET_KEYS
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map_or("", |(_, v)| v)
            ))
        };
        let ns = || value.parse::<u64>().ok().filter(|v| *v > 0).ok_or_else(bad);
        if let Some(r) = self.cpufreq.set(key, value) {
            return r.map_err(err);
        }
        match key {
            "fair.policy" => {
                self.fair = match value {
                    "eevdf" => FairPolicy::Eevdf,
                    "cfs" => FairPolicy::Cfs,
                    _ => return Err(bad()),
                }
            }
            "pelt.invariance" => self.invariance = Invariance::from_name(value).ok_or_else(bad)?,
            "util_est.form" => {
                self.util_est = match value {
                    "ewma" => UtilEstForm::Ewma,
                    "enqueued_ewma" => UtilEstForm::EnqueuedEwma,
                    _ => return Err(bad()),
                }
            }
            "hz" => {
                self.hz = match value.parse() {
                    Ok(hz @ (100 | 250 | 300 | 1000)) => hz,
                    _ => return Err(bad()),
                }
            }
            "sched.tunable_scaling" => {
                self.tunable_scaling = match value {
                    "none" => TunableScaling::None,
                    "log" => TunableScaling::Log,
                    "linear" => TunableScaling::Linear,
                    _ => return Err(bad()),
                }
            }
            "rt.throttling" => {
                self.rt_throttling = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(bad()),
                }
            }
            "rt.rr_timeslice_ms" => {
                self.rr_timeslice_ms = value.parse().ok().filter(|v| *v > 0).ok_or_else(bad)?
            }
            "dl.grub" => self.grub = Grub::from_name(value).ok_or_else(bad)?,
            "dl.fair_server_runtime_ns" => {
                self.fair_server_runtime_ns = match value.parse::<u64>() {
                    Ok(v) if v <= self.fair_server_period_ns => v,
                    _ => return Err(bad()),
                }
            }
            "dl.fair_server_period_ns" => {
                self.fair_server_period_ns = match value.parse::<u64>() {
                    Ok(v @ 100_000..=4_194_304_000) if self.fair_server_runtime_ns <= v => v,
                    _ => return Err(bad()),
                }
            }
            "sched.rt_period_us" => {
                self.rt_period_us = match value.parse::<u64>() {
                    Ok(v @ 1..=0x7fff_ffff) if self.rt_runtime_us.is_none_or(|r| r <= v) => v,
                    _ => return Err(bad()),
                }
            }
            "sched.rt_runtime_us" => {
                self.rt_runtime_us = match value.parse::<i64>() {
                    Ok(-1) => None,
                    Ok(v) if (0..=self.rt_period_us as i64).contains(&v) => Some(v as u64),
                    _ => return Err(bad()),
                }
            }
            "fair.base_slice_ns" => self.base_slice_ns = ns()?,
            "fair.latency_ns" => self.latency_ns = ns()?,
            "fair.min_granularity_ns" => self.min_granularity_ns = ns()?,
            "fair.wakeup_granularity_ns" => self.wakeup_granularity_ns = ns()?,
            _ => {
                return Err(err(format!(
                    "unknown key {key:?}; known: {}",
                    SET_KEYS
                        .iter()
                        .chain(&cpufreq::TUNABLE_KEYS)
                        .map(|(k, _)| *k)
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }
        Ok(())
    }

    /// `get_update_sysctl_factor`: 1 + ilog2(min(ncpus, 8)) under the default LOG scaling.
    pub fn factor(&self, nr_cpus: usize) -> u64 {
        let cpus = nr_cpus.clamp(1, 8) as u64;
        match self.tunable_scaling {
            TunableScaling::None => 1,
            TunableScaling::Linear => cpus,
            TunableScaling::Log => 1 + cpus.ilog2() as u64,
        }
    }

    /// (rt_period, rt_runtime) µs, None when unlimited: what the deadline class reads.
    pub fn rt_bandwidth(&self) -> Option<(u64, u64)> {
        self.rt_runtime_us.map(|r| (self.rt_period_us, r))
    }

    /// The root rt_rq's budget per period (ns), when RT throttling is on and limits anything.
    pub fn rt_throttle(&self) -> Option<u64> {
        self.rt_runtime_us
            .filter(|&r| self.rt_throttling && r < self.rt_period_us)
            .map(|r| r * 1000)
    }

    /// Each CPU's fair server (runtime, period) ns, None when there is none.
    pub fn fair_server(&self) -> Option<(u64, u64)> {
        (self.fair_server_runtime_ns > 0)
            .then_some((self.fair_server_runtime_ns, self.fair_server_period_ns))
    }

    /// `sched_rr_timeslice` in jiffies: `msecs_to_jiffies(sysctl_sched_rr_timeslice)`.
    pub fn rr_timeslice_ticks(&self) -> u32 {
        (self.rr_timeslice_ms * self.hz).div_ceil(1000).max(1)
    }

    /// `TICK_NSEC`.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / self.hz as u64
    }

    /// Every switch and its value, for `schedlab features` and run headers.
    pub fn listing(&self) -> Vec<(String, String)> {
        let mut out = vec![
            (
                "fair.policy".to_string(),
                match self.fair {
                    FairPolicy::Eevdf => "eevdf",
                    FairPolicy::Cfs => "cfs",
                }
                .to_string(),
            ),
            ("pelt.invariance".into(), self.invariance.name().into()),
            (
                "util_est.form".into(),
                match self.util_est {
                    UtilEstForm::Ewma => "ewma",
                    UtilEstForm::EnqueuedEwma => "enqueued_ewma",
                }
                .into(),
            ),
            ("hz".into(), self.hz.to_string()),
            (
                "sched.tunable_scaling".into(),
                format!("{:?}", self.tunable_scaling).to_lowercase(),
            ),
            ("fair.base_slice_ns".into(), self.base_slice_ns.to_string()),
            ("fair.latency_ns".into(), self.latency_ns.to_string()),
            (
                "fair.min_granularity_ns".into(),
                self.min_granularity_ns.to_string(),
            ),
            (
                "fair.wakeup_granularity_ns".into(),
                self.wakeup_granularity_ns.to_string(),
            ),
        ];
        out.push((
            "rt.throttling".into(),
            if self.rt_throttling { "on" } else { "off" }.into(),
        ));
        out.push((
            "rt.rr_timeslice_ms".into(),
            self.rr_timeslice_ms.to_string(),
        ));
        out.push(("dl.grub".into(), self.grub.name().into()));
        out.push((
            "dl.fair_server_runtime_ns".into(),
            self.fair_server_runtime_ns.to_string(),
        ));
        out.push((
            "dl.fair_server_period_ns".into(),
            self.fair_server_period_ns.to_string(),
        ));
        out.push(("sched.rt_period_us".into(), self.rt_period_us.to_string()));
        out.push((
            "sched.rt_runtime_us".into(),
            self.rt_runtime_us.map_or("-1".into(), |r| r.to_string()),
        ));
        out.extend(self.cpufreq.listing());
        for (i, name) in FEATURE_NAMES.iter().enumerate() {
            out.push((
                name.to_string(),
                if self.bits & (1 << i) != 0 {
                    "on"
                } else {
                    "off"
                }
                .into(),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_follow_features_h() {
        let f = Features::preset(Kernel::V6_12);
        assert_eq!(f.fair, FairPolicy::Eevdf);
        assert!(f.has(Feat::DelayDequeue) && f.has(Feat::RunToParity) && !f.has(Feat::NextBuddy));
        let f = Features::preset(Kernel::V6_1);
        assert_eq!(f.fair, FairPolicy::Cfs);
        assert!(f.has(Feat::LastBuddy) && f.has(Feat::BaseSlice) && !f.has(Feat::DelayDequeue));
    }

    #[test]
    fn overrides_and_refusals() {
        let mut f = Features::preset(Kernel::V6_12);
        f.set_feature("NO_RUN_TO_PARITY").unwrap();
        assert!(!f.has(Feat::RunToParity));
        f.set("fair.policy=cfs").unwrap();
        f.set("hz=1000").unwrap();
        assert_eq!((f.fair, f.tick_ns()), (FairPolicy::Cfs, 1_000_000));
        assert!(f
            .set_feature("NO_SUCH")
            .unwrap_err()
            .to_string()
            .contains("unknown feature"));
        assert!(f
            .set("hz=123")
            .unwrap_err()
            .to_string()
            .contains("100 | 250"));
        assert!(f
            .set("nope=1")
            .unwrap_err()
            .to_string()
            .contains("unknown key"));
        assert!(f.set("hz").unwrap_err().to_string().contains("KEY=VALUE"));
    }

    #[test]
    fn log_factor() {
        let f = Features::preset(Kernel::V6_12);
        let factors: Vec<u64> = [1, 2, 3, 4, 7, 8, 144]
            .iter()
            .map(|&n| f.factor(n))
            .collect();
        assert_eq!(factors, vec![1, 2, 2, 3, 3, 4, 4]);
    }
}
