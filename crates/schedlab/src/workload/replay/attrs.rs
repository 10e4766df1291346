//! What a trace cannot say of its threads (`schedlab replay --attrs FILE.toml`): deadline
//! parameters, uclamp, a cgroup, affinity, or another policy, as rt-app task keys per
//! thread. A table names a thread by its task name in the workload (`comm-pid`) or by its
//! comm (every thread of it; a task name's table wins); its keys (rt-app's scheduling keys)
//! go into the task as they are, over the rebuild's policy and priority (a policy given
//! drops the rebuild's priority too: it was the traced policy's):
//!
//! ```toml
//! ["video-1042"]
//! policy = "SCHED_DEADLINE"
//! dl-runtime = 2000
//! dl-period = 16000
//! [kworker]
//! cpus = [0, 1]
//! ```
//!
//! The workload with them is read back by schedlab's rt-app parser, so a wrong value is
//! refused as a workload's would be, naming this file and the task's key.

use std::fmt::Write as _;
use std::path::Path;

use super::rebuild::Thread;
use crate::error::InputError;
use crate::limits::read_input;
use crate::workload::SCHED_KEYS;

/// Each table's name and its keys, as JSON members (`"key": value`).
#[derive(Debug, Default)]
pub struct Attrs {
    pub origin: String,
    tables: Vec<(String, Vec<(String, String)>)>,
}

impl Attrs {
    /// The side file at `path`.
    pub fn load(path: &Path) -> Result<Attrs, InputError> {
        let origin = path.display().to_string();
        let text = String::from_utf8(read_input(path)?)
            .map_err(|_| InputError::new(&origin, "not UTF-8 text"))?;
        let doc: toml::Table =
            toml::from_str(&text).map_err(|e| InputError::new(&origin, e.message()))?;
        let mut tables = vec![];
        for (name, keys) in doc {
            let toml::Value::Table(keys) = keys else {
                let msg = format!("{name}: a table of rt-app task keys, not a value");
                return Err(InputError::new(&origin, msg));
            };
            let mut members = vec![];
            for (key, v) in keys {
                if !SCHED_KEYS.contains(&key.as_str()) {
                    let msg = format!(
                        "{name}.{key}: not a task's scheduling key (one of {})",
                        SCHED_KEYS.join(", ")
                    );
                    return Err(InputError::new(&origin, msg));
                }
                let mut json = String::new();
                to_json(&mut json, &v)
                    .map_err(|what| InputError::new(&origin, format!("{name}.{key}: {what}")))?;
                members.push((key, json));
            }
            tables.push((name, members));
        }
        Ok(Attrs { origin, tables })
    }

    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Thread `t`'s keys: its task name's table, else its comm's.
    pub fn of(&self, t: &Thread) -> &[(String, String)] {
        let name = t.name();
        let find = |n: &str| self.tables.iter().find(|(k, _)| k == n);
        find(&name)
            .or_else(|| find(&t.comm))
            .map_or(&[], |(_, m)| m.as_slice())
    }

    /// A table naming no thread of `threads` is refused.
    pub fn check(&self, threads: &[Thread]) -> Result<(), InputError> {
        for (name, _) in &self.tables {
            if !threads.iter().any(|t| &t.name() == name || &t.comm == name) {
                let msg = format!(
                    "[{name}]: no thread of the trace has this task name (comm-pid) or comm"
                );
                return Err(InputError::new(&self.origin, msg));
            }
        }
        Ok(())
    }
}

/// A TOML value as JSON: strings, numbers, booleans and arrays of them.
fn to_json(s: &mut String, v: &toml::Value) -> Result<(), &'static str> {
    match v {
        toml::Value::String(x) => s.push_str(&super::rtapp_json::quote(x)),
        toml::Value::Integer(x) => {
            let _ = write!(s, "{x}");
        }
        toml::Value::Float(x) if x.is_finite() => {
            let _ = write!(s, "{x}");
        }
        toml::Value::Boolean(x) => {
            let _ = write!(s, "{x}");
        }
        toml::Value::Array(xs) => {
            s.push('[');
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                to_json(s, x)?;
            }
            s.push(']');
        }
        _ => return Err("not a string, number, boolean or array of them"),
    }
    Ok(())
}
