//! The run's cgroup hierarchy (cpu controller): the groups rt-app's `taskgroup` keys name,
//! and what rt-app cannot say, from `--cgroup PATH:KEY=VALUE[,KEY=VALUE…]` (cgroup v2
//! `cpu.weight`, `cpu.weight.nice`, `cpu.idle`, `cpu.max`; v1 `cpu.shares`) and
//! `--idle-cgroups N` (N empty groups, seed 001).

use std::collections::HashMap;

use crate::error::InputError;
use crate::limits::{MAX_GROUPS, MAX_GROUP_DEPTH};
use crate::sched::uapi::{MAX_SHARES, MIN_SHARES, SCHED_PRIO_TO_WEIGHT};

/// `CGROUP_WEIGHT_MIN`, `CGROUP_WEIGHT_DFL`, `CGROUP_WEIGHT_MAX`.
const WEIGHT_MIN: u64 = 1;
const WEIGHT_DFL: u64 = 100;
const WEIGHT_MAX: u64 = 10_000;

/// cpu.max's period bounds (`min_cfs_quota_period` 1 ms, `max_cfs_quota_period` 1 s) and
/// its quota's floor (`min_cfs_quota_period` too); µs.
pub const MIN_PERIOD_US: u64 = 1_000;
pub const MAX_PERIOD_US: u64 = 1_000_000;
const MIN_QUOTA_US: u64 = 1_000;

/// One group: where it is, its weight and limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSpec {
    /// "/a/b"; the root is "/".
    pub path: String,
    /// Its parent's index (the root is its own).
    pub parent: u32,
    /// `tg->shares`, unscaled (cpu.weight 100 = 1024).
    pub shares: u64,
    pub idle: bool,
    /// cpu.max: (quota, period) µs; None is "max".
    pub max: Option<(u64, u64)>,
    /// Described by `--cgroup` (else created with the defaults where a task names it).
    pub described: bool,
}

/// The hierarchy, root first, each group after its parent.
#[derive(Debug, Clone)]
pub struct Cgroups {
    pub groups: Vec<GroupSpec>,
    index: HashMap<String, u32>,
    /// Each (group, file) a `--cgroup` set, and that option: a second setting is refused.
    set_by: HashMap<(u32, &'static str), String>,
}

impl Default for Cgroups {
    fn default() -> Cgroups {
        let root = GroupSpec {
            path: "/".into(),
            parent: 0,
            shares: 1024,
            idle: false,
            max: None,
            described: true,
        };
        Cgroups {
            index: HashMap::from([("/".to_string(), 0)]),
            groups: vec![root],
            set_by: HashMap::new(),
        }
    }
}

/// `sched_weight_from_cgroup`: cpu.weight → shares, rounded to the closest.
fn shares_of_weight(weight: u64) -> u64 {
    (weight * 1024 + WEIGHT_DFL / 2) / WEIGHT_DFL
}

impl Cgroups {
    /// The group at `path` ("a/b" or "/a/b"), created with its missing parents (cpu.weight
    /// 100, no limit) as rt-app creates a taskgroup's; `at` locates the path in errors.
    pub fn intern(&mut self, path: &str, at: &str) -> Result<u32, InputError> {
        self.intern_with(path, &|m| InputError::new(at, m))
    }

    /// `intern`, its errors made by `err` (a run option's, or a workload key's).
    fn intern_with(
        &mut self,
        path: &str,
        err: &dyn Fn(String) -> InputError,
    ) -> Result<u32, InputError> {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        if parts
            .iter()
            .any(|p| *p == "." || *p == ".." || p.contains(char::is_whitespace))
        {
            return Err(err(format!(
                "cgroup path {path:?}: a component is \".\", \"..\" or has a space"
            )));
        }
        if parts.len() > MAX_GROUP_DEPTH {
            return Err(err(format!(
                "cgroup path {path:?} is {} levels deep; at most {MAX_GROUP_DEPTH}",
                parts.len()
            )));
        }
        let mut id = 0u32;
        let mut full = String::new();
        for part in parts {
            full.push('/');
            full.push_str(part);
            id = match self.index.get(&full) {
                Some(&g) => g,
                None => self.create(&full, id).map_err(err)?,
            };
        }
        Ok(id)
    }

    fn create(&mut self, path: &str, parent: u32) -> Result<u32, String> {
        if self.groups.len() >= MAX_GROUPS {
            return Err(format!("more than {MAX_GROUPS} cgroups"));
        }
        let id = self.groups.len() as u32;
        self.groups.push(GroupSpec {
            path: path.into(),
            parent,
            shares: 1024,
            idle: false,
            max: None,
            described: false,
        });
        self.index.insert(path.into(), id);
        Ok(id)
    }

    /// `--cgroup PATH:KEY=VALUE[,KEY=VALUE…]`.
    pub fn describe(&mut self, spec: &str) -> Result<(), InputError> {
        let at = format!("cgroup {spec}");
        let err = |m: String| InputError::option(&at, m);
        let (path, settings) = spec
            .split_once(':')
            .ok_or_else(|| err("expected PATH:KEY=VALUE[,KEY=VALUE…]".into()))?;
        let id = self.intern_with(path, &err)?;
        if id == 0 {
            return Err(err("the root group's settings cannot be changed".into()));
        }
        self.groups[id as usize].described = true;
        for kv in settings.split(',') {
            let (key, value) = kv
                .split_once('=')
                .ok_or_else(|| err(format!("{kv:?} is not KEY=VALUE")))?;
            // weight, weight.nice and shares all set the group's shares (cpu.weight).
            let file = match key {
                "weight" | "cpu.weight" | "weight.nice" | "cpu.weight.nice" | "shares"
                | "cpu.shares" => Some("weight"),
                "idle" | "cpu.idle" => Some("idle"),
                "max" | "cpu.max" => Some("max"),
                _ => None,
            };
            let here = format!("{path}:{kv}");
            if let Some(before) = file.and_then(|f| self.set_by.get(&(id, f))) {
                let file = file.unwrap_or_default();
                return Err(err(format!(
                    "{path}'s cpu.{file} is set twice ({before}, then {here}): give it once"
                )));
            }
            let g = &mut self.groups[id as usize];
            let number = |lo: i64, hi: i64| {
                value
                    .trim()
                    .parse::<i64>()
                    .ok()
                    .filter(|v| (lo..=hi).contains(v))
                    .ok_or_else(|| {
                        err(format!(
                            "{key}={value:?}: expected an integer in {lo}..={hi}"
                        ))
                    })
            };
            match key {
                "weight" | "cpu.weight" => {
                    g.shares =
                        shares_of_weight(number(WEIGHT_MIN as i64, WEIGHT_MAX as i64)? as u64)
                }
                "weight.nice" | "cpu.weight.nice" => {
                    g.shares = SCHED_PRIO_TO_WEIGHT[(number(-20, 19)? + 20) as usize]
                }
                "shares" | "cpu.shares" => {
                    g.shares = number(MIN_SHARES as i64, MAX_SHARES as i64)? as u64
                }
                "idle" | "cpu.idle" => g.idle = number(0, 1)? == 1,
                "max" | "cpu.max" => g.max = parse_max(value).map_err(err)?,
                _ => {
                    return Err(err(format!(
                        "unknown key {key:?}; known: weight, weight.nice, shares, idle, max"
                    )))
                }
            }
            if let Some(f) = file {
                self.set_by.insert((id, f), here);
            }
        }
        Ok(())
    }

    /// A note for each group made up with the defaults because a task or a `--cgroup`
    /// path named it.
    pub fn notes(&self) -> impl Iterator<Item = String> + '_ {
        self.groups.iter().filter(|g| !g.described).map(|g| {
            format!(
                "cgroup {}: created as rt-app creates a taskgroup's, with cpu.weight 100 and no limit (a cgroup description {}:weight=N sets one)",
                g.path, g.path
            )
        })
    }

    /// `--idle-cgroups N`: N empty groups under the root, /idle-0 … /idle-(N−1).
    pub fn add_idle(&mut self, n: u64) -> Result<(), InputError> {
        let err = |m: String| InputError::option("idle_cgroups", m);
        if n as usize > MAX_GROUPS - self.groups.len() {
            return Err(err(format!(
                "{n} is too many: at most {} more ({MAX_GROUPS} cgroups in all, {} already: the \
                 root and the workload's)",
                MAX_GROUPS - self.groups.len(),
                self.groups.len()
            )));
        }
        for i in 0..n {
            let g = self.intern_with(&format!("/idle-{i}"), &err)?;
            self.groups[g as usize].described = true;
        }
        Ok(())
    }
}

/// cpu.max's value: "max", or "QUOTA/PERIOD" µs (the file's "QUOTA PERIOD").
fn parse_max(value: &str) -> Result<Option<(u64, u64)>, String> {
    let value = value.trim();
    if value == "max" {
        return Ok(None);
    }
    let bad = || format!("max={value:?}: expected \"max\" or QUOTA/PERIOD in µs");
    let (q, p) = value.split_once(['/', ' ']).ok_or_else(bad)?;
    let (q, p): (u64, u64) = (q.parse().map_err(|_| bad())?, p.parse().map_err(|_| bad())?);
    if !(MIN_PERIOD_US..=MAX_PERIOD_US).contains(&p) {
        return Err(format!(
            "max={value:?}: the period must be {MIN_PERIOD_US}..={MAX_PERIOD_US} µs"
        ));
    }
    if q < MIN_QUOTA_US {
        return Err(format!(
            "max={value:?}: the quota must be at least {MIN_QUOTA_US} µs"
        ));
    }
    // tg_set_cfs_bandwidth: the quota is capped (max_cfs_runtime, about 70 years); the
    // simulation is shorter, so a quota above the run's longest time is refused.
    if q > crate::limits::MAX_TIME_US {
        return Err(format!(
            "max={value:?}: the quota must be at most {} µs",
            crate::limits::MAX_TIME_US
        ));
    }
    Ok(Some((q, p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_become_shares_as_the_kernel_converts_them() {
        // sched_weight_from_cgroup: DIV_ROUND_CLOSEST(w * 1024, 100).
        assert_eq!(shares_of_weight(100), 1024);
        assert_eq!(shares_of_weight(300), 3072);
        assert_eq!(shares_of_weight(1), 10); // 10.24 → 10
        assert_eq!(shares_of_weight(10_000), 102_400);
        let mut c = Cgroups::default();
        c.describe("/a/b:weight.nice=5,idle=1,max=50000/100000")
            .unwrap();
        let b = &c.groups[2];
        assert_eq!(
            (b.path.as_str(), b.parent, b.shares, b.idle),
            ("/a/b", 1, 335, true)
        );
        assert_eq!(b.max, Some((50_000, 100_000)));
        assert!(!c.groups[1].described && b.described);
    }

    #[test]
    fn out_of_range_settings_are_refused() {
        let mut c = Cgroups::default();
        for (spec, says) in [
            ("/a:weight=0", "1..=10000"),
            ("/a:weight=10001", "1..=10000"),
            ("/a:shares=1", "2..=262144"),
            ("/a:shares=262145", "2..=262144"),
            ("/a:max=999/100000", "at least 1000"),
            ("/a:max=5000/2000000", "period"),
            ("/a:cpu.idle=2", "0..=1"),
            ("/a:colour=red", "unknown key"),
            ("/a", "PATH:KEY=VALUE"),
            ("/../a:weight=1", "\"..\""),
            ("/:weight=5", "root"),
        ] {
            let e = c.describe(spec).unwrap_err().to_string();
            assert!(e.contains(says), "{spec}: {e}");
        }
        let e = c.add_idle(MAX_GROUPS as u64).unwrap_err().to_string();
        assert!(e.contains("too many"), "{e}");
    }
}
