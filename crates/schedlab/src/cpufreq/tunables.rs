//! Governor choice and tunables: `--governor [POLICY=]NAME` and `--set GOVERNOR.KEY=VALUE`,
//! with the ranges the kernel's sysfs stores accept. Each governor declares its tunables and
//! keys in its own file.

use super::cooling::Schedule;
use super::{conservative, ondemand, sched_dvfs, schedutil, userspace};

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

/// A governor's `--set GOVERNOR.KEY=VALUE` switch: what it accepts (said when a value is
/// refused), how it stores a value (false: out of range), and how it reads back.
pub struct Key {
    pub name: &'static str,
    pub accepts: &'static str,
    pub set: fn(&mut Tunables, u64) -> bool,
    pub get: fn(&Tunables) -> String,
}

/// Every governor's keys, each declared in its governor's file and registered here once
/// (in the order `schedlab features` lists them).
const KEYS: [&[Key]; 5] = [
    &schedutil::KEYS,
    &ondemand::KEYS,
    &conservative::KEYS,
    &userspace::KEYS,
    &sched_dvfs::KEYS,
];

/// Every governor key.
pub fn keys() -> impl Iterator<Item = &'static Key> {
    KEYS.iter().flat_map(|k| k.iter())
}

/// `v` as a `T`, if it lies within `lo..=hi`.
pub(super) fn in_range<T: TryFrom<u64>>(v: u64, lo: u64, hi: u64) -> Option<T> {
    (lo..=hi)
        .contains(&v)
        .then(|| T::try_from(v).ok())
        .flatten()
}

/// Store `v` in `slot` if it is within `lo..=hi`.
pub(super) fn set_in<T: TryFrom<u64>>(slot: &mut T, v: u64, lo: u64, hi: u64) -> bool {
    in_range(v, lo, hi).map(|x| *slot = x).is_some()
}

/// Set `slot` to `v` if it is within `lo..=hi`.
pub(super) fn set_some<T: TryFrom<u64>>(slot: &mut Option<T>, v: u64, lo: u64, hi: u64) -> bool {
    in_range(v, lo, hi).map(|x| *slot = Some(x)).is_some()
}

/// A value that is the kernel's default for the policy unless set.
pub(super) fn or_default<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or("default".to_string(), T::to_string)
}

/// The governors' tunables for a run: each governor's own (its sysfs directory's).
#[derive(Debug, Clone, PartialEq)]
pub struct Tunables {
    /// The governor of every policy, then per-policy choices by name.
    pub governor: GovName,
    pub per_policy: Vec<(String, GovName)>,
    /// `scaling_max_freq` (kHz) of every policy (`NO_MAX_FREQ`: the table's top), then per
    /// policy.
    pub max_freq: u32,
    pub per_policy_max_freq: Vec<(String, u32)>,
    /// The cpufreq cooling device's caps over time, of every policy, then per policy;
    /// likewise a hardware throttle's.
    pub cooling: Schedule,
    pub per_policy_cooling: Vec<(String, Schedule)>,
    pub hw: Schedule,
    pub per_policy_hw: Vec<(String, Schedule)>,
    pub schedutil: schedutil::SugovTunables,
    pub ondemand: ondemand::OdTuners,
    pub conservative: conservative::CsTuners,
    pub userspace: userspace::UserspaceTunables,
    pub sched_dvfs: sched_dvfs::SchedDvfsTunables,
}

impl Default for Tunables {
    fn default() -> Tunables {
        Tunables {
            governor: GovName::Performance,
            per_policy: Vec::new(),
            max_freq: NO_MAX_FREQ,
            per_policy_max_freq: Vec::new(),
            cooling: Schedule::default(),
            per_policy_cooling: Vec::new(),
            hw: Schedule::default(),
            per_policy_hw: Vec::new(),
            schedutil: Default::default(),
            ondemand: Default::default(),
            conservative: Default::default(),
            userspace: Default::default(),
            sched_dvfs: Default::default(),
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
        *policy_or_all(&self.per_policy, &self.governor, policy)
    }

    /// The `scaling_max_freq` of the policy named `policy`.
    pub fn max_freq_of(&self, policy: &str) -> u32 {
        *policy_or_all(&self.per_policy_max_freq, &self.max_freq, policy)
    }

    /// The cooling device's caps of the policy named `policy`, and its hardware's.
    pub fn caps_of(&self, policy: &str) -> [&Schedule; 2] {
        [
            policy_or_all(&self.per_policy_cooling, &self.cooling, policy),
            policy_or_all(&self.per_policy_hw, &self.hw, policy),
        ]
    }

    /// `--set KEY=VALUE` for a governor key; `None` if `key` is not one.
    /// `cpufreq.governor=NAME` sets every policy's, `cpufreq.governor.POLICY=NAME` one's;
    /// `cpufreq.scaling_max_freq[.POLICY]=KHZ` likewise its limit, and
    /// `cpufreq.cooling_max_freq[.POLICY]=KHZ@TIME,...` and `cpufreq.hw_max_freq...` its
    /// cooling device's and its hardware's caps.
    pub fn set(&mut self, key: &str, value: &str) -> Option<Result<(), String>> {
        for (name, all, per) in [
            (
                "cpufreq.cooling_max_freq",
                &mut self.cooling,
                &mut self.per_policy_cooling,
            ),
            ("cpufreq.hw_max_freq", &mut self.hw, &mut self.per_policy_hw),
        ] {
            let policy = key
                .strip_prefix(name)
                .filter(|r| r.is_empty() || r.starts_with('.'));
            let Some(policy) = policy else { continue };
            let schedule = Schedule::parse(value).map_err(|e| format!("{key}={value:?}: {e}"));
            return Some(schedule.map(|s| match policy.strip_prefix('.') {
                Some(p) => per.push((p.to_string(), s)),
                None => *all = s,
            }));
        }
        if key == "cpufreq.governor" {
            return Some(self.set_governor(value));
        }
        if let Some(policy) = key.strip_prefix("cpufreq.governor.") {
            return Some(self.set_governor(&format!("{policy}={value}")));
        }
        let policy = key.strip_prefix("cpufreq.scaling_max_freq.");
        if policy.is_some() || key == "cpufreq.scaling_max_freq" {
            let Some(khz) = parse_max_freq(value) else {
                return Some(Err(format!(
                    "{key}={value:?}: expected a frequency in kHz, 1 .. {}, or {MAX_FREQ_NAME}",
                    NO_MAX_FREQ - 1
                )));
            };
            match policy {
                Some(p) => self.per_policy_max_freq.push((p.to_string(), khz)),
                None => self.max_freq = khz,
            }
            return Some(Ok(()));
        }
        let k = keys().find(|k| k.name == key)?;
        let stored = value.parse::<u64>().is_ok_and(|v| (k.set)(self, v));
        Some(match stored {
            true => Ok(()),
            false => Err(format!("{key}={value:?}: expected {}", k.accepts)),
        })
    }

    /// Every governor switch and its value, for `schedlab features`.
    pub fn listing(&self) -> Vec<(String, String)> {
        let mut out = vec![(
            "cpufreq.governor".to_string(),
            self.governor.name().to_string(),
        )];
        for (p, g) in &self.per_policy {
            out.push((format!("cpufreq.governor.{p}"), g.name().to_string()));
        }
        out.push((
            "cpufreq.scaling_max_freq".to_string(),
            max_freq_name(self.max_freq),
        ));
        for (p, f) in &self.per_policy_max_freq {
            out.push((format!("cpufreq.scaling_max_freq.{p}"), max_freq_name(*f)));
        }
        for (name, all, per) in [
            (
                "cpufreq.cooling_max_freq",
                &self.cooling,
                &self.per_policy_cooling,
            ),
            ("cpufreq.hw_max_freq", &self.hw, &self.per_policy_hw),
        ] {
            out.push((name.to_string(), all.name()));
            out.extend(per.iter().map(|(p, s)| (format!("{name}.{p}"), s.name())));
        }
        out.extend(keys().map(|k| (k.name.to_string(), (k.get)(self))));
        out
    }
}

/// The last setting of `policy` in `per`, else `all`.
fn policy_or_all<'a, T>(per: &'a [(String, T)], all: &'a T, policy: &str) -> &'a T {
    (per.iter().rev())
        .find(|(p, _)| p == policy)
        .map_or(all, |(_, v)| v)
}

/// A `scaling_max_freq` above every table: the policy's top frequency, as written
/// `cpuinfo_max_freq`.
pub const NO_MAX_FREQ: u32 = u32::MAX;
const MAX_FREQ_NAME: &str = "cpuinfo_max_freq";

/// A `scaling_max_freq` value: kHz from 1, or `cpuinfo_max_freq`.
fn parse_max_freq(value: &str) -> Option<u32> {
    match value {
        MAX_FREQ_NAME => Some(NO_MAX_FREQ),
        _ => value.parse().ok().filter(|f| (1..NO_MAX_FREQ).contains(f)),
    }
}

/// How `listing` shows a `scaling_max_freq`.
fn max_freq_name(khz: u32) -> String {
    match khz {
        NO_MAX_FREQ => MAX_FREQ_NAME.to_string(),
        _ => khz.to_string(),
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
