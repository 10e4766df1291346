//! A trace's threads rebuilt as programs (`schedlab replay`): each running stretch becomes
//! work in capacity-invariant units (its time × the CPU's capacity / 1024 × its frequency /
//! its highest, what rt-app's `run` counts), and each sleep is either a dependency or a
//! time. A thread woken by another (the task running on the waking CPU, outside interrupt
//! context) waits for it: the sleeper waits on its own semaphore (`sem_wait`) and the waker
//! posts it (`sem_post`) at that point of its own program, so the order survives another
//! kernel or machine. A thread woken from an interrupt (or an idle CPU) sleeps for the time
//! it slept, on a timer of its own expiring when it woke: absolute times, which do not drift
//! when a run takes longer than in the trace. Simplified: the timer expires at the observed
//! wakeup (its slack and interrupt latency included).

use std::collections::HashMap;

use super::dat::{EventFormat, Field, Meta, Record};
use crate::error::InputError;
use crate::platform::Platform;
use crate::sched::latency::Latencies;
use crate::time::Ns;

/// `TRACE_FLAG_HARDIRQ`, `TRACE_FLAG_SOFTIRQ` and `TRACE_FLAG_NMI` in `common_flags`: the
/// event came from interrupt context.
const IRQ_FLAGS: u64 = 0x08 | 0x10 | 0x40;
/// `prev_state`'s task-state bits (`TASK_REPORT`); 0 is a preempted, runnable task.
const STATE_MASK: i64 = 0xff;
/// `EXIT_DEAD` and `EXIT_ZOMBIE`, as `sched_switch` reports them.
const DEAD: i64 = 0x10 | 0x20;

/// One step of a rebuilt thread's program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Work, in ns at the largest capacity and the highest frequency.
    Run(Ns),
    /// A sleep of this long (its end unseen: woken before the trace said how).
    Sleep(Ns),
    /// A sleep until this time from the trace's start (an interrupt's wakeup).
    Timer(Ns),
    /// Wait until another thread posts this one's semaphore.
    Wait,
    /// Post the semaphore of this thread (its index among the rebuilt threads).
    Post(usize),
}

/// What the trace shows of a thread, to set beside a run of its rebuild (`--check`).
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Time on a CPU.
    pub run_ns: Ns,
    /// Wakeups from a sleep.
    pub wakeups: u64,
    /// From each wakeup to the switch that ran it.
    pub latency: Latencies,
    /// Switches in on another CPU than its last.
    pub migrations: u64,
    woken_at: Option<Ns>,
    last_cpu: Option<usize>,
}

/// A rebuilt thread.
#[derive(Debug, Clone)]
pub struct Thread {
    pub pid: i32,
    /// Earlier threads of this pid (a pid reused after an exit).
    pub reuse: u32,
    pub comm: String,
    /// `prio` as `sched_switch` reports it (120 + nice for a fair task, 99 − priority for a
    /// real-time one).
    pub prio: i32,
    /// When it first appears, from the trace's start.
    pub start: Ns,
    pub steps: Vec<Step>,
    pub observed: Observed,
    /// Work not yet a step.
    pending: f64,
    /// Since when it sleeps (None: running or runnable).
    asleep: Option<Ns>,
    pub exited: bool,
}

impl Thread {
    /// Its task's name in the workload: `<comm>-<pid>`, and `.N` for the pid's N-th reuse.
    pub fn name(&self) -> String {
        match self.reuse {
            0 => format!("{}-{}", self.comm, self.pid),
            n => format!("{}-{}.{n}", self.comm, self.pid),
        }
    }
}

/// The fields read, of the events the rebuild uses.
struct Events {
    switch: u16,
    prev_pid: Field,
    prev_state: Field,
    prev_prio: Field,
    next_pid: Field,
    next_comm: Field,
    next_prio: Field,
    waking: Option<(u16, Field)>,
    exit: Option<(u16, Field)>,
    rename: Option<(u16, Field, Field)>,
    frequency: Option<(u16, Field, Field)>,
    flags: Field,
}

impl Events {
    fn of(meta: &Meta) -> Option<Events> {
        let find = |name: &str| meta.events.values().find(|e| e.name == name);
        let f = |e: &EventFormat, n: &str| e.field(n).cloned();
        let sw = find("sched_switch")?;
        let one = |name, field| find(name).and_then(|e| Some((e.id, f(e, field)?)));
        let two = |name, a, b| find(name).and_then(|e| Some((e.id, f(e, a)?, f(e, b)?)));
        Some(Events {
            switch: sw.id,
            prev_pid: f(sw, "prev_pid")?,
            prev_state: f(sw, "prev_state")?,
            prev_prio: f(sw, "prev_prio")?,
            next_pid: f(sw, "next_pid")?,
            next_comm: f(sw, "next_comm")?,
            next_prio: f(sw, "next_prio")?,
            waking: one("sched_waking", "pid"),
            exit: one("sched_process_exit", "pid"),
            rename: two("task_rename", "pid", "newcomm"),
            frequency: two("cpu_frequency", "state", "cpu_id"),
            flags: f(sw, "common_flags")?,
        })
    }
}

/// The rebuild as the trace is read.
pub struct Rebuild {
    ev: Events,
    threads: Vec<Thread>,
    by_pid: HashMap<i32, usize>,
    /// Each pid's threads that exited.
    reused: HashMap<i32, u32>,
    /// Each CPU's running thread (index) and since when it runs there.
    running: Vec<Option<(usize, Ns)>>,
    /// Each CPU's capacity at its highest frequency, that frequency and its frequency now.
    capacity: Vec<u32>,
    max_khz: Vec<u64>,
    khz: Vec<u64>,
    start: Option<Ns>,
    last: Ns,
    /// A `cpu_frequency` event was seen.
    frequencies: bool,
    /// Each CPU's time running a thread.
    busy: Vec<Ns>,
}

impl Rebuild {
    /// A rebuild of `meta`'s trace, its CPUs those of `plat`.
    pub fn new(meta: &Meta, plat: &Platform, origin: &str) -> Result<Rebuild, InputError> {
        let ev = Events::of(meta).ok_or_else(|| {
            InputError::new(
                origin,
                "the trace has no sched_switch event (record it with -e sched)",
            )
        })?;
        if meta.nr_cpus > plat.cpus.len() {
            let msg = format!(
                "the trace has {} CPUs, platform {} has {}",
                meta.nr_cpus,
                plat.name,
                plat.cpus.len()
            );
            return Err(InputError::new(origin, msg));
        }
        let max_khz: Vec<u64> = (plat.cpus.iter())
            .map(|c| {
                plat.freq_domains[c.freq_domain]
                    .opps
                    .last()
                    .map_or(1, |o| o.khz as u64)
            })
            .collect();
        Ok(Rebuild {
            ev,
            threads: vec![],
            by_pid: HashMap::new(),
            reused: HashMap::new(),
            running: vec![None; plat.cpus.len()],
            capacity: plat.cpus.iter().map(|c| c.capacity_orig).collect(),
            khz: max_khz.clone(),
            max_khz,
            start: None,
            last: 0,
            frequencies: false,
            busy: vec![0; plat.cpus.len()],
        })
    }

    /// Thread `pid`'s index, added (named `comm`, at `prio`, starting at `start` from the
    /// trace's start) when first seen.
    fn thread(&mut self, pid: i32, comm: &str, prio: i32, start: Ns) -> usize {
        let reuse = self.reused.get(&pid).copied().unwrap_or(0);
        *self.by_pid.entry(pid).or_insert_with(|| {
            self.threads.push(Thread {
                pid,
                reuse,
                comm: comm.to_string(),
                prio,
                start,
                steps: vec![],
                observed: Observed::default(),
                pending: 0.0,
                asleep: None,
                exited: false,
            });
            self.threads.len() - 1
        })
    }

    /// The work CPU `cpu` did from `since` to `now`.
    fn work(&self, cpu: usize, since: Ns, now: Ns) -> f64 {
        let scale =
            self.capacity[cpu] as f64 / 1024.0 * self.khz[cpu] as f64 / self.max_khz[cpu] as f64;
        (now - since) as f64 * scale
    }

    /// What ran on `cpu` until `now` counted to its thread.
    fn account(&mut self, cpu: usize, now: Ns) {
        if let Some((t, since)) = self.running[cpu] {
            let w = self.work(cpu, since, now);
            self.threads[t].pending += w;
            self.threads[t].observed.run_ns += now - since;
            self.busy[cpu] += now - since;
            self.running[cpu] = Some((t, now));
        }
    }

    /// Thread `t`'s pending work as a step.
    fn flush(&mut self, t: usize) {
        let th = &mut self.threads[t];
        let ns = th.pending.round();
        if ns >= 1.0 {
            th.steps.push(Step::Run(ns as Ns));
        }
        th.pending -= ns;
    }

    /// One record, at `ts` on `cpu`.
    pub fn record(&mut self, ts: Ns, cpu: u32, r: Record) {
        let cpu = cpu as usize;
        self.start.get_or_insert(ts);
        self.last = ts;
        let id = r.id();
        if id == self.ev.switch {
            self.switch(ts, cpu, r);
        } else if let Some((_, pid)) = self.ev.waking.as_ref().filter(|w| w.0 == id) {
            let target = r.int(pid) as i32;
            let irq = r.int(&self.ev.flags) as u64 & IRQ_FLAGS != 0;
            self.waking(ts, cpu, r.pid(), target, irq);
        } else if let Some((_, pid)) = self.ev.exit.as_ref().filter(|e| e.0 == id) {
            if let Some(&t) = self.by_pid.get(&(r.int(pid) as i32)) {
                self.threads[t].exited = true;
            }
        } else if let Some((_, pid, comm)) = self.ev.rename.as_ref().filter(|e| e.0 == id) {
            if let Some(&t) = self.by_pid.get(&(r.int(pid) as i32)) {
                self.threads[t].comm = r.str(comm).to_string();
            }
        } else if let Some((_, state, cpu_id)) = self.ev.frequency.as_ref().filter(|e| e.0 == id) {
            let (khz, c) = (r.int(state) as u64, r.int(cpu_id) as usize);
            if c < self.khz.len() {
                self.frequencies = true;
                self.account(c, ts);
                self.khz[c] = khz.min(self.max_khz[c]);
            }
        }
    }

    fn switch(&mut self, ts: Ns, cpu: usize, r: Record) {
        let ev = &self.ev;
        let (prev, next) = (r.int(&ev.prev_pid) as i32, r.int(&ev.next_pid) as i32);
        let state = r.int(&ev.prev_state) & STATE_MASK;
        let (next_comm, next_prio) = (
            r.str(&ev.next_comm).to_string(),
            r.int(&ev.next_prio) as i32,
        );
        let prev_prio = r.int(&ev.prev_prio) as i32;
        self.account(cpu, ts);
        self.running[cpu] = None;
        let since_start = ts - self.start.unwrap_or(ts);
        if prev != 0 {
            // First seen leaving the CPU: it ran from before the trace.
            let t = self.thread(prev, "", prev_prio, 0);
            self.threads[t].prio = prev_prio;
            if state & DEAD != 0 {
                // Its last switch: the pid's next thread is another.
                self.flush(t);
                self.threads[t].exited = true;
                self.by_pid.remove(&prev);
                *self.reused.entry(prev).or_default() += 1;
            } else if state != 0 {
                self.flush(t);
                self.threads[t].asleep = Some(ts);
            }
        }
        if next != 0 {
            let t = self.thread(next, &next_comm, next_prio, since_start);
            let th = &mut self.threads[t];
            if th.comm.is_empty() {
                th.comm = next_comm;
            }
            th.prio = next_prio;
            // Woken unseen (before the trace, or its waking not recorded): its sleep ends now.
            if let Some(since) = th.asleep.take() {
                th.steps.push(Step::Sleep(ts - since));
            }
            let seen = &mut th.observed;
            if let Some(w) = seen.woken_at.take() {
                seen.latency.record(ts - w);
            }
            seen.migrations += seen.last_cpu.is_some_and(|c| c != cpu) as u64;
            seen.last_cpu = Some(cpu);
            self.running[cpu] = Some((t, ts));
        }
    }

    /// `waker` (the pid running on `cpu`, 0: idle) wakes `target`, in interrupt context or
    /// not.
    fn waking(&mut self, ts: Ns, cpu: usize, waker: i32, target: i32, irq: bool) {
        let Some(&t) = self.by_pid.get(&target) else {
            // First seen asleep: its program starts with this wakeup.
            let since_start = ts - self.start.unwrap_or(ts);
            self.thread(target, "", 120, since_start);
            return;
        };
        if self.threads[t].asleep.take().is_none() {
            return; // not asleep: nothing to wait for
        }
        let seen = &mut self.threads[t].observed;
        seen.wakeups += 1;
        seen.woken_at = Some(ts);
        let by = self.running[cpu].filter(|&(w, _)| !irq && self.threads[w].pid == waker && w != t);
        match by {
            Some((w, _)) => {
                self.account(cpu, ts);
                self.flush(w);
                self.threads[w].steps.push(Step::Post(t));
                self.threads[t].steps.push(Step::Wait);
            }
            None => {
                let at = ts - self.start.unwrap_or(ts);
                self.threads[t].steps.push(Step::Timer(at));
            }
        }
    }

    /// The threads, their last work counted, the trace's length, each CPU's busy time and
    /// notes.
    pub fn finish(mut self) -> (Vec<Thread>, Ns, Vec<Ns>, Vec<String>) {
        for cpu in 0..self.running.len() {
            self.account(cpu, self.last);
        }
        for t in 0..self.threads.len() {
            self.flush(t);
        }
        let length = self.last - self.start.unwrap_or(self.last);
        let mut notes = vec![];
        if !self.frequencies {
            notes.push("no cpu_frequency event: every CPU at its highest frequency".into());
        }
        (self.threads, length, self.busy, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform;
    use crate::tracepoint::EVENTS;

    const US: Ns = 1000;
    const A: i32 = 101;
    const B: i32 = 102;
    const C: i32 = 103;
    /// `prev_state` of a task going to sleep (TASK_INTERRUPTIBLE) and of one exiting.
    const SLEEP: i64 = 1;
    const EXIT: i64 = 0x10;
    /// `common_flags` of an event in a hard interrupt with interrupts off.
    const HARDIRQ: i64 = 0x09;

    /// A trace's metadata with the catalogue's event formats (the kernel's layouts).
    fn meta() -> Meta {
        let events = EVENTS
            .iter()
            .map(|f| (f.id, EventFormat::parse(f.system, &f.file()).unwrap()));
        Meta {
            version: 6,
            layout: crate::workload::replay::dat::PageLayout {
                size: 4096,
                commit: 8,
                long: 8,
                data: 16,
            },
            events: events.collect(),
            cmdlines: vec![],
            uname: None,
            clock: None,
            nr_cpus: 4,
            offset: 0,
            cpus: vec![],
        }
    }

    /// A record of event `name` in `pid`'s context with `fields` set.
    fn record(meta: &Meta, name: &str, pid: i32, fields: &[(&str, i64)]) -> Vec<u8> {
        let f = meta.events.values().find(|e| e.name == name).unwrap();
        let mut r = vec![0u8; 128];
        r[..2].copy_from_slice(&f.id.to_le_bytes());
        r[4..8].copy_from_slice(&pid.to_le_bytes());
        for &(name, v) in fields {
            let field = f.field(name).unwrap();
            r[field.offset..field.offset + field.size]
                .copy_from_slice(&v.to_le_bytes()[..field.size]);
        }
        r
    }

    fn switch(meta: &Meta, prev: i32, state: i64, next: i32) -> Vec<u8> {
        let f = [
            ("prev_pid", prev as i64),
            ("prev_state", state),
            ("prev_prio", 120),
            ("next_pid", next as i64),
            ("next_prio", 120),
        ];
        record(meta, "sched_switch", prev, &f)
    }

    fn waking(meta: &Meta, waker: i32, target: i32, flags: i64) -> Vec<u8> {
        record(
            meta,
            "sched_waking",
            waker,
            &[
                ("common_flags", flags),
                ("pid", target as i64),
                ("prio", 120),
            ],
        )
    }

    /// A pipe ping-pong worked out by hand on smp:4, µs from 0. CPU 1: B runs 0–50 and
    /// sleeps; CPU 0: A runs from 0, wakes B at 100, sleeps at 120. CPU 1: B runs 105–185,
    /// waking A at 180. CPU 0: A runs 190–200. CPU 2: C runs 0–10 and sleeps; a timer
    /// interrupt on CPU 0 (A running) wakes it at 150; it runs 152–160 and exits.
    #[test]
    fn a_ping_pong_becomes_waits_and_posts_and_an_interrupt_a_timer() {
        let m = meta();
        let plat = platform::load_builtin("smp:4").unwrap();
        let mut rb = Rebuild::new(&m, &plat, "t.dat").unwrap();
        let events: Vec<(Ns, u32, Vec<u8>)> = vec![
            (0, 0, switch(&m, 0, 0, A)),
            (0, 1, switch(&m, 0, 0, B)),
            (0, 2, switch(&m, 0, 0, C)),
            (10 * US, 2, switch(&m, C, SLEEP, 0)),
            (50 * US, 1, switch(&m, B, SLEEP, 0)),
            (100 * US, 0, waking(&m, A, B, 0)),
            (105 * US, 1, switch(&m, 0, 0, B)),
            (120 * US, 0, switch(&m, A, SLEEP, 0)),
            (150 * US, 0, waking(&m, 0, C, HARDIRQ)),
            (152 * US, 2, switch(&m, 0, 0, C)),
            (160 * US, 2, switch(&m, C, EXIT, 0)),
            (180 * US, 1, waking(&m, B, A, 0)),
            (185 * US, 1, switch(&m, B, SLEEP, 0)),
            (190 * US, 0, switch(&m, 0, 0, A)),
            (200 * US, 3, switch(&m, 0, 0, 0)),
        ];
        for (ts, cpu, r) in &events {
            rb.record(*ts, *cpu, Record { data: r });
        }
        let (threads, length, busy, notes) = rb.finish();
        assert_eq!(length, 200 * US);
        // CPU 0: A 0–120 and 190–200; CPU 1: B 0–50, 105–185; CPU 2: C 0–10, 152–160.
        assert_eq!(busy, [130 * US, 130 * US, 18 * US, 0]);
        let seen = |pid: i32| &threads.iter().find(|t| t.pid == pid).unwrap().observed;
        // A woken at 180, on at 190: 10 µs; B at 100, on at 105: 5 µs; C at 150, on at 152.
        assert_eq!(
            (seen(A).run_ns, seen(A).wakeups, seen(A).latency.max()),
            (130 * US, 1, 10 * US)
        );
        assert_eq!(
            (seen(B).run_ns, seen(B).wakeups, seen(B).latency.max()),
            (130 * US, 1, 5 * US)
        );
        assert_eq!(
            (seen(C).run_ns, seen(C).wakeups, seen(C).latency.max()),
            (18 * US, 1, 2 * US)
        );
        assert_eq!(
            seen(A).migrations + seen(B).migrations + seen(C).migrations,
            0
        );
        assert_eq!(
            notes,
            ["no cpu_frequency event: every CPU at its highest frequency"]
        );
        let steps = |pid: i32| &threads.iter().find(|t| t.pid == pid).unwrap().steps;
        use Step::*;
        let index = |pid: i32| threads.iter().position(|t| t.pid == pid).unwrap();
        let (a, b) = (index(A), index(B));
        assert_eq!(
            steps(A),
            &[Run(100 * US), Post(b), Run(20 * US), Wait, Run(10 * US)]
        );
        assert_eq!(
            steps(B),
            &[Run(50 * US), Wait, Run(75 * US), Post(a), Run(5 * US)]
        );
        assert_eq!(steps(C), &[Run(10 * US), Timer(150 * US), Run(8 * US)]);
        assert!(threads.iter().find(|t| t.pid == C).unwrap().exited);
    }

    /// On hikey960 a big CPU (capacity 1024) at half its highest frequency does half the
    /// work per ns, a LITTLE one (462) at its highest 462/1024 of it.
    #[test]
    fn work_is_scaled_by_capacity_and_frequency() {
        let m = meta();
        let plat = platform::load_builtin("hikey960").unwrap();
        let big = plat
            .cpus
            .iter()
            .position(|c| c.capacity_orig == 1024)
            .unwrap();
        let max = plat.freq_domains[plat.cpus[big].freq_domain]
            .opps
            .last()
            .unwrap()
            .khz as i64;
        let mut rb = Rebuild::new(&m, &plat, "t.dat").unwrap();
        let freq = record(
            &m,
            "cpu_frequency",
            0,
            &[("state", max / 2), ("cpu_id", big as i64)],
        );
        rb.record(0, big as u32, Record { data: &freq });
        rb.record(
            0,
            big as u32,
            Record {
                data: &switch(&m, 0, 0, A),
            },
        );
        rb.record(
            0,
            0,
            Record {
                data: &switch(&m, 0, 0, B),
            },
        );
        rb.record(
            1024 * US,
            big as u32,
            Record {
                data: &switch(&m, A, SLEEP, 0),
            },
        );
        rb.record(
            1024 * US,
            0,
            Record {
                data: &switch(&m, B, SLEEP, 0),
            },
        );
        let (threads, _, _, notes) = rb.finish();
        assert!(notes.is_empty());
        assert_eq!(threads[0].steps, [Step::Run(512 * US)]);
        assert_eq!(threads[1].steps, [Step::Run(462 * US)]);
    }

    /// Pid 101 runs 0–10 µs and exits; a new thread of pid 101 runs 20–50 µs: two threads.
    #[test]
    fn a_pid_reused_after_an_exit_is_another_thread() {
        let m = meta();
        let mut rb = Rebuild::new(&m, &platform::load_builtin("smp:4").unwrap(), "t.dat").unwrap();
        for (ts, r) in [
            (0, switch(&m, 0, 0, A)),
            (10 * US, switch(&m, A, EXIT, 0)),
            (20 * US, switch(&m, 0, 0, A)),
            (50 * US, switch(&m, A, SLEEP, 0)),
        ] {
            rb.record(ts, 0, Record { data: &r });
        }
        let (threads, ..) = rb.finish();
        let runs: Vec<_> = threads
            .iter()
            .map(|t| (t.pid, t.reuse, t.exited, t.steps.clone()))
            .collect();
        assert_eq!(
            runs,
            [
                (A, 0, true, vec![Step::Run(10 * US)]),
                (A, 1, false, vec![Step::Run(30 * US)])
            ]
        );
        assert!(threads[1].name().ends_with("-101.1"));
    }

    #[test]
    fn a_trace_without_switches_or_with_more_cpus_is_refused() {
        let mut m = meta();
        let plat = platform::load_builtin("smp:2").unwrap();
        let err = Rebuild::new(&m, &plat, "t.dat").err().unwrap().to_string();
        assert_eq!(err, "t.dat: the trace has 4 CPUs, platform smp:2 has 2");
        m.events.retain(|_, e| e.name != "sched_switch");
        let err = Rebuild::new(&m, &platform::load_builtin("smp:4").unwrap(), "t.dat");
        assert!(err.err().unwrap().to_string().contains("no sched_switch"));
    }
}
