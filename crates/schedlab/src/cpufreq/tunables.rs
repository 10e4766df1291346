//! Governor choice and tunables: `--governor [POLICY=]NAME` and `--set GOVERNOR.KEY=VALUE`,
//! with the ranges the kernel's sysfs stores accept.

/// The governors schedlab models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GovName {
    Performance,
    Powersave,
    Userspace,
    Schedutil,
    Ondemand,
    Conservative,
    /// Turquette's scheduler-driven prototype (v3, June 2015) that seed 003 calls "sched".
    SchedDvfs2015,
}

pub const GOVERNORS: [(&str, GovName); 7] = [
    ("performance", GovName::Performance),
    ("powersave", GovName::Powersave),
    ("userspace", GovName::Userspace),
    ("schedutil", GovName::Schedutil),
    ("ondemand", GovName::Ondemand),
    ("conservative", GovName::Conservative),
    ("sched-dvfs-2015", GovName::SchedDvfs2015),
];

impl GovName {
    pub fn from_name(name: &str) -> Option<GovName> {
        GOVERNORS.iter().find(|(n, _)| *n == name).map(|(_, g)| *g)
    }

    pub fn name(self) -> &'static str {
        GOVERNORS
            .iter()
            .find(|(_, g)| *g == self)
            .map_or("", |(n, _)| n)
    }
}

/// `--set` keys of the governors and what they accept.
pub const TUNABLE_KEYS: [(&str, &str); 12] = [
    ("schedutil.rate_limit_us", "µs between frequency updates (default: 1.5 × transition latency, else 1000)"),
    ("ondemand.up_threshold", "1..100 (default 95)"),
    ("ondemand.sampling_rate_us", "≥ 2 ticks in µs (default: max(2 ticks, transition delay))"),
    ("ondemand.sampling_down_factor", "1..100000 (default 1)"),
    ("conservative.up_threshold", "down_threshold+1..100 (default 80)"),
    ("conservative.down_threshold", "1..up_threshold-1 (default 20)"),
    ("conservative.freq_step", "0..100, % of the policy's max (default 5)"),
    ("conservative.sampling_rate_us", "≥ 2 ticks in µs (default: max(2 ticks, transition delay))"),
    ("conservative.sampling_down_factor", "1..10 (default 1)"),
    ("conservative.idle_fast_down", "1, or 0 for kernels before the deferred-update fast down (2018), as seed 003's (default 1)"),
    ("userspace.khz", "an OPP of the policy (default: the frequency it finds)"),
    ("sched_dvfs.throttle_us", "µs after a change during which requests are dropped (default: the transition latency, else 50000)"),
];

/// The governors' tunables for a run (`None`: the kernel's default for the policy).
#[derive(Debug, Clone, PartialEq)]
pub struct Tunables {
    /// The governor of every policy, then per-policy choices by name.
    pub governor: GovName,
    pub per_policy: Vec<(String, GovName)>,
    pub rate_limit_us: Option<u64>,
    pub od_up_threshold: u32,
    pub od_sampling_rate_us: Option<u64>,
    pub od_sampling_down_factor: u32,
    pub cs_up_threshold: u32,
    pub cs_down_threshold: u32,
    pub cs_freq_step: u32,
    pub cs_sampling_rate_us: Option<u64>,
    pub cs_sampling_down_factor: u32,
    pub cs_idle_fast_down: bool,
    pub userspace_khz: Option<u32>,
    pub throttle_us: Option<u64>,
}

impl Default for Tunables {
    fn default() -> Tunables {
        Tunables {
            governor: GovName::Performance,
            per_policy: Vec::new(),
            rate_limit_us: None,
            // MICRO_FREQUENCY_UP_THRESHOLD: NO_HZ idle accounting is available.
            od_up_threshold: 95,
            od_sampling_rate_us: None,
            od_sampling_down_factor: 1,
            cs_up_threshold: 80,
            cs_down_threshold: 20,
            cs_freq_step: 5,
            cs_sampling_rate_us: None,
            cs_sampling_down_factor: 1,
            cs_idle_fast_down: true,
            userspace_khz: None,
            throttle_us: None,
        }
    }
}

impl Tunables {
    /// `--governor NAME` or `--governor POLICY=NAME`.
    pub fn set_governor(&mut self, spec: &str) -> Result<(), String> {
        let (policy, name) = match spec.split_once('=') {
            Some((p, n)) => (Some(p), n),
            None => (None, spec),
        };
        let g = GovName::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = GOVERNORS.iter().map(|(n, _)| *n).collect();
            format!("unknown governor {name:?}; known: {}", known.join(", "))
        })?;
        match policy {
            Some(p) => self.per_policy.push((p.to_string(), g)),
            None => self.governor = g,
        }
        Ok(())
    }

    /// The governor of the policy named `policy`.
    pub fn governor_of(&self, policy: &str) -> GovName {
        self.per_policy
            .iter()
            .rev()
            .find(|(p, _)| p == policy)
            .map_or(self.governor, |(_, g)| *g)
    }

    /// `--set KEY=VALUE` for a governor key; `None` if `key` is not one.
    /// `cpufreq.governor=NAME` sets every policy's, `cpufreq.governor.POLICY=NAME` one's.
    pub fn set(&mut self, key: &str, value: &str) -> Option<Result<(), String>> {
        if key == "cpufreq.governor" {
            return Some(self.set_governor(value));
        }
        if let Some(policy) = key.strip_prefix("cpufreq.governor.") {
            return Some(self.set_governor(&format!("{policy}={value}")));
        }
        let (_, expect) = TUNABLE_KEYS.iter().find(|(k, _)| *k == key)?;
        let bad = || Err(format!("{key}={value:?}: expected {expect}"));
        let Ok(v) = value.parse::<u64>() else {
            return Some(bad());
        };
        let within = |lo: u64, hi: u64| (lo..=hi).contains(&v).then_some(v as u32);
        let ok = match key {
            "schedutil.rate_limit_us" => {
                within(0, u32::MAX as u64).map(|_| self.rate_limit_us = Some(v))
            }
            "ondemand.up_threshold" => within(1, 100).map(|t| self.od_up_threshold = t),
            "ondemand.sampling_rate_us" => {
                self.od_sampling_rate_us = Some(v);
                Some(())
            }
            "ondemand.sampling_down_factor" => {
                within(1, 100_000).map(|f| self.od_sampling_down_factor = f)
            }
            "conservative.up_threshold" => {
                within(self.cs_down_threshold as u64 + 1, 100).map(|t| self.cs_up_threshold = t)
            }
            "conservative.down_threshold" => {
                within(1, self.cs_up_threshold as u64 - 1).map(|t| self.cs_down_threshold = t)
            }
            "conservative.freq_step" => within(0, 100).map(|s| self.cs_freq_step = s),
            "conservative.sampling_rate_us" => {
                self.cs_sampling_rate_us = Some(v);
                Some(())
            }
            "conservative.sampling_down_factor" => {
                within(1, 10).map(|f| self.cs_sampling_down_factor = f)
            }
            "conservative.idle_fast_down" => within(0, 1).map(|b| self.cs_idle_fast_down = b == 1),
            "userspace.khz" => within(1, u32::MAX as u64).map(|k| self.userspace_khz = Some(k)),
            "sched_dvfs.throttle_us" => {
                self.throttle_us = Some(v);
                Some(())
            }
            _ => None,
        };
        Some(ok.map_or_else(bad, Ok))
    }

    /// Every governor switch and its value, for `schedlab features`.
    pub fn listing(&self) -> Vec<(String, String)> {
        let opt = |v: Option<u64>| v.map_or("default".to_string(), |v| v.to_string());
        let mut out = vec![(
            "cpufreq.governor".to_string(),
            self.governor.name().to_string(),
        )];
        for (p, g) in &self.per_policy {
            out.push((format!("cpufreq.governor.{p}"), g.name().to_string()));
        }
        let values = [
            opt(self.rate_limit_us),
            self.od_up_threshold.to_string(),
            opt(self.od_sampling_rate_us),
            self.od_sampling_down_factor.to_string(),
            self.cs_up_threshold.to_string(),
            self.cs_down_threshold.to_string(),
            self.cs_freq_step.to_string(),
            opt(self.cs_sampling_rate_us),
            self.cs_sampling_down_factor.to_string(),
            u32::from(self.cs_idle_fast_down).to_string(),
            opt(self.userspace_khz.map(u64::from)),
            opt(self.throttle_us),
        ];
        out.extend(
            TUNABLE_KEYS
                .iter()
                .zip(values)
                .map(|((k, _), v)| (k.to_string(), v)),
        );
        out
    }
}

/// A sampling rate the kernel would accept for `pol` (`sampling_rate_store`).
pub(super) fn sampling_rate_us(
    set: Option<u64>,
    pol: &super::Policy,
    what: &str,
) -> Result<u64, String> {
    let min = pol.min_sampling_us();
    match set {
        Some(v) if v < min => Err(format!(
            "{what}.sampling_rate_us={v}: below two ticks ({min} µs)"
        )),
        Some(v) => Ok(v),
        None => Ok(min.max(pol.transition_delay_us())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_tunables_are_refused() {
        let mut t = Tunables::default();
        assert!(t.set("ondemand.up_threshold", "101").unwrap().is_err());
        assert!(t.set("ondemand.up_threshold", "0").unwrap().is_err());
        assert!(t.set("conservative.down_threshold", "80").unwrap().is_err());
        assert!(t
            .set("conservative.sampling_down_factor", "11")
            .unwrap()
            .is_err());
        assert!(t.set("conservative.freq_step", "x").unwrap().is_err());
        assert!(t.set("nope.key", "1").is_none());
        assert!(t.set("conservative.up_threshold", "30").unwrap().is_ok());
        assert!(t.set_governor("turbo").is_err());
        t.set_governor("big=schedutil").unwrap();
        assert_eq!(t.governor_of("big"), GovName::Schedutil);
        assert_eq!(t.governor_of("little"), GovName::Performance);
    }
}
