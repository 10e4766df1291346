//! Rebuilt threads as an rt-app workload: one task per thread (named `<comm>-<pid>`), its
//! policy and priority from `sched_switch`'s prio, its first appearance as its `delay`, and
//! its steps as one phase run once (`run`, `sleep`, `timer`, `sem_wait`, `sem_post` with
//! numbered keys, as LISA's generator numbers them), so that the same file runs on a board.
//! Times are µs, each rounded with the previous roundings' error carried, so that a
//! thread's total stays within 1 µs of the trace's. A thread's wakeups by interrupt are one
//! absolute timer of its own (`unique`), anchored at its start (`t_first`, its `delay`):
//! each `timer` event's period is the time from the previous expiry to the next.

use std::fmt::Write as _;

use super::attrs::Attrs;
use super::rebuild::{Step, Thread};
use crate::time::Ns;

/// The workload's JSON text, the trace `length` long, each task with its side file's keys.
pub fn rtapp_json(threads: &[Thread], length: Ns, attrs: &Attrs) -> String {
    let mut s = String::new();
    let secs = length.div_ceil(1_000_000_000).max(1);
    let _ = write!(
        s,
        "{{\n  \"global\": {{\"duration\": {secs}, \"default_policy\": \"SCHED_OTHER\", \"calibration\": \"CPU0\", \"log_size\": \"disable\"}},\n  \"tasks\": {{"
    );
    for (i, t) in threads.iter().filter(|t| has_events(t)).enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(s, "{sep}\n    {}: {{", quote(&t.name()));
        let (policy, priority) = policy(t.prio);
        let given = attrs.of(t);
        let has = |key: &str| given.iter().any(|(k, _)| k == key);
        if !has("policy") {
            let _ = write!(s, "\"policy\": \"{policy}\", ");
        }
        if !has("priority") && !has("policy") {
            let _ = write!(s, "\"priority\": {priority}, ");
        }
        for (key, json) in given {
            let _ = write!(s, "{}: {json}, ", quote(key));
        }
        let _ = write!(s, "\"delay\": {}, \"loop\": 1", (t.start + 500) / 1000);
        let (mut run, mut sleep) = (Micros::default(), Micros::default());
        let mut expiry = (t.start + 500) / 1000;
        for (k, step) in t.steps.iter().enumerate() {
            // A stretch under 0.5 µs (its error carried) is left out.
            let _ = match step {
                Step::Run(ns) => match run.of(*ns) {
                    0 => Ok(()),
                    us => write!(s, ", \"run{k}\": {us}"),
                },
                Step::Sleep(ns) => match sleep.of(*ns) {
                    0 => Ok(()),
                    us => write!(s, ", \"sleep{k}\": {us}"),
                },
                Step::Timer(at) => {
                    let next = ((at + 500) / 1000).max(expiry);
                    let period = next - std::mem::replace(&mut expiry, next);
                    write!(s, ", \"timer{k}\": {{\"ref\": \"unique\", \"period\": {period}, \"mode\": \"absolute\"}}")
                }
                Step::Wait(_) => write!(s, ", \"sem_wait{k}\": {}", quote(&t.name())),
                Step::Post(i) => write!(s, ", \"sem_post{k}\": {}", quote(&threads[*i].name())),
                Step::Yield => write!(s, ", \"yield{k}\": 0"),
            };
        }
        s.push('}');
    }
    s.push_str("\n  }\n}\n");
    s
}

/// Whether thread `t`'s program has an event rt-app can hold: a phase needs one, and a
/// stretch under 0.5 µs is none. Without, the thread is left out (a thread first seen
/// exiting, say).
pub fn has_events(t: &Thread) -> bool {
    (t.steps.iter()).any(|s| !matches!(s, Step::Run(ns) | Step::Sleep(ns) if *ns < 500))
}

/// The policy and rt-app `priority` of a task of `sched_switch` prio `prio`: a real-time
/// one's 99 − prio (FIFO: the trace does not tell RR apart), a fair one's nice 120 − prio.
/// Simplified: a deadline task (prio −1) has no parameters in the trace; it runs as FIFO 99.
fn policy(prio: i32) -> (&'static str, i32) {
    match prio {
        p if p < 0 => ("SCHED_FIFO", 99),
        p if p < 100 => ("SCHED_FIFO", 99 - p),
        p => ("SCHED_OTHER", (p - 120).clamp(-20, 19)),
    }
}

/// ns to whole µs, the rounding error carried to the next.
#[derive(Default)]
struct Micros {
    carry: i64,
}

impl Micros {
    fn of(&mut self, ns: Ns) -> u64 {
        let exact = ns as i64 + self.carry;
        let us = ((exact + 500) / 1000).max(0);
        self.carry = exact - us * 1000;
        us as u64
    }
}

/// `s` as a JSON string.
pub fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}
