//! Caps on a policy over time: the cpufreq cooling device's (drivers/thermal/
//! cpufreq_cooling.c), `--set cpufreq.cooling_max_freq[.POLICY]=KHZ@TIME,...`, each step a
//! `cpufreq_set_cur_state` (a frequency QoS limit, and until 6.10 the CPUs' thermal
//! pressure too), and a hardware throttle's (Qualcomm's LMh, drivers/cpufreq/
//! qcom-cpufreq-hw.c), `cpufreq.hw_max_freq`, which its driver reports as the CPUs' hw
//! (≤6.9: thermal) pressure.

use crate::time::Ns;

/// A cap that lifts the limit: the table's top.
pub const NO_CAP: &str = "cpuinfo_max_freq";
/// The most steps a schedule may have (a step's number is an event's 16 bits).
pub const MAX_STEPS: usize = u16::MAX as usize;

/// The cooling device's caps of one policy: from each instant (ns after the run's start,
/// ascending), the kHz it allows (`u32::MAX`: no cap). Empty, `none`: it never caps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedule(pub Vec<(Ns, u32)>);

impl Schedule {
    /// `KHZ@TIME[,KHZ@TIME...]`: a frequency in kHz (or `cpuinfo_max_freq`) from a time
    /// with its unit (ns, us, ms or s), the times increasing.
    pub fn parse(value: &str) -> Result<Schedule, String> {
        let mut steps: Vec<(Ns, u32)> = Vec::new();
        if value == "none" {
            return Ok(Schedule(steps));
        }
        if value.split(',').count() > MAX_STEPS {
            return Err(format!("more than {MAX_STEPS} steps"));
        }
        for step in value.split(',') {
            let (khz, at) = step
                .split_once('@')
                .ok_or_else(|| format!("{step:?} is not KHZ@TIME (e.g. 1400000@2s)"))?;
            let khz = match khz {
                NO_CAP => u32::MAX,
                _ => (khz.parse().ok())
                    .filter(|&f| f > 0 && f < u32::MAX)
                    .ok_or_else(|| format!("{khz:?} is not a frequency in kHz or {NO_CAP}"))?,
            };
            let at = parse_time(at)?;
            if steps.last().is_some_and(|&(prev, _)| prev >= at) {
                return Err(format!("{step:?}: the times must increase"));
            }
            steps.push((at, khz));
        }
        Ok(Schedule(steps))
    }

    /// As `parse` reads it.
    pub fn name(&self) -> String {
        let step = |&(at, khz): &(Ns, u32)| match khz {
            u32::MAX => format!("{NO_CAP}@{at}ns"),
            _ => format!("{khz}@{at}ns"),
        };
        match self.0.is_empty() {
            true => "none".to_string(),
            false => self.0.iter().map(step).collect::<Vec<_>>().join(","),
        }
    }
}

/// A time with its unit: `2s`, `500ms`, `250us`, `1000ns`.
fn parse_time(text: &str) -> Result<Ns, String> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let scale = match &text[digits.len()..] {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => {
            return Err(format!(
                "{text:?} is not a time with its unit (ns, us, ms or s)"
            ))
        }
    };
    (digits.parse::<Ns>().ok())
        .and_then(|n| n.checked_mul(scale))
        .filter(|&ns| ns <= crate::limits::MAX_SIM_NS)
        .ok_or_else(|| format!("{text:?} is not a time with its unit (ns, us, ms or s)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_is_caps_from_increasing_times() {
        let s = Schedule::parse("1400000@2s,cpuinfo_max_freq@2500ms").unwrap();
        assert_eq!(s.0, [(2_000_000_000, 1_400_000), (2_500_000_000, u32::MAX)]);
        assert_eq!(
            Schedule::parse(&s.name()).unwrap(),
            s,
            "its name reads back"
        );
        assert_eq!(Schedule::parse("none").unwrap().name(), "none");
        let steps = |n: usize| {
            (1..=n)
                .map(|i| format!("1@{i}ns"))
                .collect::<Vec<_>>()
                .join(",")
        };
        assert_eq!(
            Schedule::parse(&steps(MAX_STEPS)).unwrap().0.len(),
            MAX_STEPS
        );
        assert!(Schedule::parse(&steps(MAX_STEPS + 1)).is_err());
        for bad in ["1400000", "x@1s", "0@1s", "1@1h", "1@2s,2@1s", "1@-1s"] {
            assert!(Schedule::parse(bad).is_err(), "{bad}");
        }
    }
}
