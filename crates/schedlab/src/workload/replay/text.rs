//! Reading a trace as text: `trace-cmd report` (`cpus=N`, then `comm-pid [cpu] secs.frac:
//! event: fields`, µs or, with `-t`, ns) or tracefs's own `trace` file (`#P:N` in its
//! header, and the latency columns `d.h2.` before the time), plain or gzipped, streamed a
//! line at a time (and `trace-cmd report -l`'s layout, the CPU and the latency columns one
//! word). `sched_switch` and `sched_wakeup*` come in two spellings: the kernel's
//! print fmt (`prev_comm=… ==> next_comm=…`) and trace-cmd's sched plugin (`comm:pid [prio]
//! S ==> comm:pid [prio]`). Whether a waking ran in an interrupt is in the latency columns
//! only; a trace without them does not say (`TextTrace::contexts`).

use std::fs::File;
use std::io::{BufRead, BufReader};

use super::rebuild::{SchedEvent, Switch};
use crate::error::InputError;
use crate::time::Ns;

/// gzip's first two bytes.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether a file starting with `head` is trace text: its first line is trace-cmd report's
/// `cpus=N` or `version = N`, or a tracefs header comment.
pub fn is_text(head: &[u8]) -> bool {
    [&b"cpus="[..], b"version", b"#"]
        .iter()
        .any(|m| head.starts_with(m))
}

/// An event line's parts.
struct Line<'a> {
    pid: i32,
    cpu: usize,
    /// The latency columns (`d.h2.`), when the trace has them.
    flags: Option<&'a str>,
    ts: Ns,
    event: &'a str,
    body: &'a str,
}

/// A text trace being read.
pub struct TextTrace {
    lines: Box<dyn BufRead>,
    origin: String,
    /// The trace's CPUs, from its header.
    pub nr_cpus: usize,
    /// The line read last, and its number.
    line: String,
    number: u64,
    /// Whether the event lines carry the latency columns (the first one tells).
    flags: Option<bool>,
    /// `[LOST N EVENTS]` lines seen.
    pub lost: u64,
    gzipped: bool,
}

impl TextTrace {
    /// The text trace in `file` (gzipped or not), its header read up to its CPU count.
    pub fn open(file: File, origin: &str) -> Result<TextTrace, InputError> {
        let failed = |e: std::io::Error| InputError::new(origin, e.to_string());
        let mut raw = BufReader::with_capacity(1 << 16, file);
        let gzipped = raw.fill_buf().map_err(failed)?.starts_with(&GZIP_MAGIC);
        let lines: Box<dyn BufRead> = if gzipped {
            let text = flate2::bufread::MultiGzDecoder::new(raw);
            Box::new(BufReader::with_capacity(1 << 16, text))
        } else {
            Box::new(raw)
        };
        let mut t = TextTrace {
            lines,
            origin: origin.to_string(),
            nr_cpus: 0,
            line: String::with_capacity(256),
            number: 0,
            flags: None,
            lost: 0,
            gzipped,
        };
        t.header()?;
        Ok(t)
    }

    /// One line's error.
    fn error(&self, what: impl std::fmt::Display) -> InputError {
        InputError::new(&self.origin, format!("line {}: {what}", self.number))
    }

    /// The next line into `self.line` (false: the end).
    fn next_line(&mut self) -> Result<bool, InputError> {
        self.line.clear();
        let n = self.lines.read_line(&mut self.line).map_err(|e| {
            let what = match e.kind() {
                _ if self.gzipped => format!("the gzip file is cut short or damaged ({e})"),
                std::io::ErrorKind::InvalidData => "not text".into(),
                _ => e.to_string(),
            };
            self.error(what)
        })?;
        self.number += 1;
        Ok(n > 0)
    }

    /// Reads the header up to `cpus=N` (trace-cmd report) or `#P:N` (tracefs).
    fn header(&mut self) -> Result<(), InputError> {
        while self.next_line()? {
            let l = self.line.trim();
            let cpus = (l.strip_prefix("cpus="))
                .or_else(|| l.split_once("#P:").map(|(_, n)| n))
                .map(|n| n.trim().parse::<usize>());
            match cpus {
                Some(Ok(n)) if (1..=crate::limits::NR_CPUS).contains(&n) => {
                    self.nr_cpus = n;
                    return Ok(());
                }
                Some(_) => return Err(self.error(format!("bad CPU count in '{l}'"))),
                None if l.is_empty() || l.starts_with('#') || l.starts_with("version") => {}
                None => break,
            }
        }
        let msg = "no CPU count before the events (trace-cmd report's cpus=N, or tracefs's #P:N)";
        Err(InputError::new(&self.origin, msg))
    }

    /// Calls `f` with each scheduler event, in the trace's order.
    pub fn for_each(&mut self, mut f: impl FnMut(Ns, usize, SchedEvent)) -> Result<(), InputError> {
        let mut last: Ns = 0;
        while self.next_line()? {
            let text = std::mem::take(&mut self.line);
            let done = self.line_event(&text, &mut last, &mut f);
            self.line = text;
            done?;
        }
        Ok(())
    }

    /// Whether the wakings' context (interrupt or task) was known: the trace had the
    /// latency columns.
    pub fn contexts(&self) -> bool {
        self.flags == Some(true)
    }

    /// One line: an event passed to `f`, a header or lost-events line counted or skipped.
    fn line_event(
        &mut self,
        text: &str,
        last: &mut Ns,
        f: &mut impl FnMut(Ns, usize, SchedEvent),
    ) -> Result<(), InputError> {
        let l = text.trim_end();
        if l.is_empty()
            || l.starts_with('#')
            || l.starts_with("version")
            || l.ends_with(" is empty")
        {
            return Ok(());
        }
        if l.contains("[LOST") && l.trim_start().starts_with("CPU") {
            self.lost += 1;
            return Ok(());
        }
        let line = split(l).ok_or_else(|| self.error("not a trace event line"))?;
        if line.cpu >= self.nr_cpus {
            let msg = format!("CPU {} in a trace of {} CPUs", line.cpu, self.nr_cpus);
            return Err(self.error(msg));
        }
        if line.ts < *last {
            return Err(self.error("out of order: earlier than the line before"));
        }
        *last = line.ts;
        let with_flags = line.flags.is_some();
        if *self.flags.get_or_insert(with_flags) != with_flags {
            return Err(self.error("latency columns on some lines only"));
        }
        let bad = || self.error(format!("{}: fields not understood", line.event));
        let ev = match line.event {
            "sched_switch" => SchedEvent::Switch(switch(line.body).ok_or_else(bad)?),
            "sched_waking" => SchedEvent::Waking {
                waker: Some(line.pid),
                target: field(line.body, "pid").and_then(int).ok_or_else(bad)?,
                irq: line.flags.is_some_and(in_interrupt),
            },
            "task_rename" => SchedEvent::Rename {
                pid: field(line.body, "pid").and_then(int).ok_or_else(bad)?,
                comm: comm(line.body, "newcomm").ok_or_else(bad)?,
            },
            "sched_migrate_task" => SchedEvent::Migrate {
                pid: field(line.body, "pid").and_then(int).ok_or_else(bad)?,
            },
            "cpu_frequency" => SchedEvent::Frequency {
                cpu: field(line.body, "cpu_id").and_then(int).ok_or_else(bad)?,
                khz: field(line.body, "state").and_then(int).ok_or_else(bad)?,
            },
            _ => return Ok(()),
        };
        f(line.ts, line.cpu, ev);
        Ok(())
    }
}

/// Whether latency columns (`d.h2.`: irqs off, need-resched, hard/soft interrupt, preempt
/// depth) say interrupt context (`trace_print_lat_fmt`: `h`/`H` hard interrupt, `s` soft,
/// `z`/`Z` NMI).
fn in_interrupt(flags: &str) -> bool {
    flags
        .as_bytes()
        .get(2)
        .is_some_and(|c| b"hHszZ".contains(c))
}

/// An event line split into its parts, in either layout.
fn split(l: &str) -> Option<Line<'_>> {
    bracketed(l).or_else(|| latency(l))
}

/// `comm-pid [cpu] [flags] secs.frac: event: body` (trace-cmd report, and tracefs's `trace`
/// with its latency columns and maybe a `(tgid)` after the pid).
fn bracketed(l: &str) -> Option<Line<'_>> {
    let open = l.find(" [")?;
    let close = open + l[open..].find(']')?;
    let cpu = l[open + 2..close].parse().ok()?;
    let rest = l[close + 1..].trim_start();
    let (first, after) = rest.split_once(' ')?;
    match first.strip_suffix(':') {
        Some(stamp) => tail(pid_of(&l[..open])?, cpu, None, stamp, after),
        None => {
            let (stamp, after) = after.trim_start().split_once(": ")?;
            tail(pid_of(&l[..open])?, cpu, Some(first), stamp, after)
        }
    }
}

/// `trace-cmd report -l`: `comm-pid cpuFLAGS secs.frac: event: body`, the CPU and the
/// latency columns one word (`1d.h..`).
fn latency(l: &str) -> Option<Line<'_>> {
    let (head, after) = l.split_once(": ")?;
    let (head, stamp) = head.trim_end().rsplit_once(' ')?;
    let (head, word) = head.trim_end().rsplit_once(' ')?;
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    let (cpu, flags) = word.split_at(digits);
    if digits == 0 || flags.is_empty() {
        return None;
    }
    tail(pid_of(head)?, cpu.parse().ok()?, Some(flags), stamp, after)
}

/// The pid of `comm-pid` (and tracefs's `(tgid)` after it).
fn pid_of(head: &str) -> Option<i32> {
    let mut head = head.trim();
    if head.ends_with(')') {
        head = head[..head.rfind('(')?].trim_end();
    }
    head.rsplit_once('-')?.1.parse().ok()
}

/// A line's parts from its time on: `event: body` after `stamp`.
fn tail<'a>(
    pid: i32,
    cpu: usize,
    flags: Option<&'a str>,
    stamp: &str,
    after: &'a str,
) -> Option<Line<'a>> {
    let (event, body) = after.split_once(':')?;
    Some(Line {
        pid,
        cpu,
        flags,
        ts: timestamp(stamp)?,
        event,
        body: body.trim(),
    })
}

/// `secs.frac` in ns (µs from trace-cmd report without `-t`).
fn timestamp(s: &str) -> Option<Ns> {
    let (secs, frac) = s.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ns = frac.parse::<Ns>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.parse::<Ns>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(ns)
}

fn int<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.parse().ok()
}

/// Field `key`'s value in a `key=value …` body, up to the next space.
fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let v = value_start(body, key)?;
    Some(v.split(' ').next().unwrap_or(v))
}

/// A comm field's value: up to the next ` key=` (a comm may hold spaces).
fn comm<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let v = value_start(body, key)?;
    let end = (v.match_indices(' '))
        .find(|&(i, _)| next_is_key(&v[i + 1..]))
        .map_or(v.len(), |(i, _)| i);
    Some(&v[..end])
}

/// Whether `s` starts with `word=`.
fn next_is_key(s: &str) -> bool {
    let word = s
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_');
    let n = word.count();
    n > 0 && s.as_bytes().get(n) == Some(&b'=')
}

/// Where `key=`'s value starts in `body` (`key` at the start or after a space).
fn value_start<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(i) = body[from..].find(key) {
        let at = from + i;
        let after = &body[at + key.len()..];
        if (at == 0 || body.as_bytes()[at - 1] == b' ') && after.starts_with('=') {
            return Some(&after[1..]);
        }
        from = at + key.len();
    }
    None
}

/// `sched_switch`'s body in either spelling.
fn switch(body: &str) -> Option<Switch<'_>> {
    let (prev, next) = body.split_once(" ==> ")?;
    if prev.starts_with("prev_comm=") {
        return Some(Switch {
            prev: field(prev, "prev_pid").and_then(int)?,
            prev_comm: comm(prev, "prev_comm")?,
            prev_state: state(field(prev, "prev_state")?),
            prev_prio: field(prev, "prev_prio").and_then(int)?,
            next: field(next, "next_pid").and_then(int)?,
            next_comm: comm(next, "next_comm")?,
            next_prio: field(next, "next_prio").and_then(int)?,
        });
    }
    let (prev, prev_state) = prev.rsplit_once(' ')?;
    let (prev_comm, prev, prev_prio) = plugin_task(prev)?;
    let (next_comm, next, next_prio) = plugin_task(next)?;
    Some(Switch {
        prev,
        prev_comm,
        prev_state: state(prev_state),
        prev_prio,
        next,
        next_comm,
        next_prio,
    })
}

/// trace-cmd's sched plugin's `comm:pid [prio]` (a comm may hold `:`).
fn plugin_task(s: &str) -> Option<(&str, i32, i32)> {
    let (task, prio) = s.rsplit_once(" [")?;
    let prio = prio.strip_suffix(']')?.parse().ok()?;
    let (comm, pid) = task.rsplit_once(':')?;
    Some((comm, pid.parse().ok()?, prio))
}

/// `prev_state`'s letters as the rebuild's bits: `R` and `R+` (preempted) 0, `X` and `Z`
/// (`EXIT_DEAD`, `EXIT_ZOMBIE`) their bits, any other state a sleep.
fn state(s: &str) -> i64 {
    match s.trim_end_matches('+') {
        "R" => 0,
        s if s.contains('X') => 0x10,
        s if s.contains('Z') => 0x20,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_cmd_report_lines_in_both_spellings() {
        let l = split("      sched-pipe-161   [001]     8.113518965: sched_switch:         sched-pipe:161 [120] S ==> swapper/1:0 [120]").unwrap();
        assert_eq!((l.pid, l.cpu, l.flags, l.ts), (161, 1, None, 8_113_518_965));
        let sw = switch(l.body).unwrap();
        assert_eq!(
            (sw.prev, sw.prev_comm, sw.prev_state, sw.prev_prio),
            (161, "sched-pipe", 1, 120)
        );
        assert_eq!((sw.next, sw.next_comm, sw.next_prio), (0, "swapper/1", 120));
        let sw = switch("prev_comm=kworker/0:1 x prev_pid=10 prev_prio=120 prev_state=R+ ==> next_comm=a b next_pid=7 next_prio=98").unwrap();
        assert_eq!(
            (
                sw.prev,
                sw.prev_comm,
                sw.prev_state,
                sw.next,
                sw.next_comm,
                sw.next_prio
            ),
            (10, "kworker/0:1 x", 0, 7, "a b", 98)
        );
        let sw = switch("kworker/1:1H:51 [100] X ==> bash:159 [120]").unwrap();
        assert_eq!(
            (sw.prev_comm, sw.prev, sw.prev_prio, sw.prev_state),
            ("kworker/1:1H", 51, 100, 0x10)
        );
    }

    /// A line's pid, CPU, latency columns, time and event.
    fn parts(l: &str) -> (i32, usize, Option<&str>, Ns, &str) {
        let l = split(l).unwrap();
        (l.pid, l.cpu, l.flags, l.ts, l.event)
    }

    /// `trace-cmd report -l`: the CPU and the latency columns one word.
    #[test]
    fn trace_cmd_report_l_lines() {
        let l = "  <idle>-0       1d.h..     1.030309381: sched_waking:         comm=thread0-0 pid=1000 prio=120 target_cpu=001";
        assert_eq!(
            parts(l),
            (0, 1, Some("d.h.."), 1_030_309_381, "sched_waking")
        );
        assert!(in_interrupt("d.h.."));
        let l = split("thread0--1009 10..... 1.000394381: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120").unwrap();
        assert_eq!((l.pid, l.cpu, l.flags), (1009, 10, Some(".....")));
        assert!(split("hello: world").is_none());
    }

    /// tracefs's `trace`: a tgid column, latency columns, µs.
    #[test]
    fn tracefs_lines_with_latency_columns() {
        let l = "          <idle>-0       (-------) [000] d.h2.  7.248162: sched_waking: comm=rcu_preempt pid=18 prio=120 target_cpu=000";
        assert_eq!(
            parts(l),
            (0, 0, Some("d.h2."), 7_248_162_000, "sched_waking")
        );
        assert!(in_interrupt("d.h2.") && !in_interrupt("d..2."));
        assert_eq!(field(split(l).unwrap().body, "pid"), Some("18"));
    }

    #[test]
    fn a_comm_runs_to_the_next_key() {
        let body = "pid=161 oldcomm=bash newcomm=my worker oom_score_adj=0";
        assert_eq!(comm(body, "newcomm"), Some("my worker"));
        assert_eq!(field(body, "pid"), Some("161"));
        assert_eq!(field("xpid=1 pid=2", "pid"), Some("2"));
        assert_eq!(field(body, "comm"), None);
    }

    #[test]
    fn timestamps_in_us_or_ns() {
        assert_eq!(timestamp("7.248162"), Some(7_248_162_000));
        assert_eq!(timestamp("12.000000001"), Some(12_000_000_001));
        assert_eq!(timestamp("7"), None);
        assert_eq!(timestamp("7.1234567890"), None);
    }
}
