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

use crate::error::InputError;
use crate::platform::Platform;
use crate::sched::latency::Latencies;
use crate::time::Ns;

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

/// `sched_switch`'s fields the rebuild reads.
#[derive(Debug, Clone, Copy)]
pub struct Switch<'a> {
    pub prev: i32,
    pub prev_comm: &'a str,
    pub prev_state: i64,
    pub prev_prio: i32,
    pub next: i32,
    pub next_comm: &'a str,
    pub next_prio: i32,
}

/// A scheduler event as the rebuild reads it, from either trace format.
#[derive(Debug, Clone, Copy)]
pub enum SchedEvent<'a> {
    Switch(Switch<'a>),
    /// `sched_waking` of `target` in the context of `waker` (0: idle), in a hard interrupt
    /// or not (`common_flags`).
    Waking {
        waker: i32,
        target: i32,
        irq: bool,
    },
    /// `task_rename`.
    Rename {
        pid: i32,
        comm: &'a str,
    },
    /// `cpu_frequency`.
    Frequency {
        cpu: usize,
        khz: u64,
    },
}

/// The rebuild as the trace is read.
pub struct Rebuild {
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
    /// A rebuild of the trace `origin` of `nr_cpus` CPUs, its CPUs those of `plat`.
    pub fn new(nr_cpus: usize, plat: &Platform, origin: &str) -> Result<Rebuild, InputError> {
        if nr_cpus > plat.cpus.len() {
            let msg = format!(
                "the trace has {} CPUs, platform {} has {}",
                nr_cpus,
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

    /// Thread `pid`'s index, added (starting at `start` from the trace's start) when first
    /// seen; `comm` names it if nothing has yet, and `prio` is its prio now.
    fn thread(&mut self, pid: i32, comm: &str, prio: i32, start: Ns) -> usize {
        let reuse = self.reused.get(&pid).copied().unwrap_or(0);
        let t = *self.by_pid.entry(pid).or_insert_with(|| {
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
            });
            self.threads.len() - 1
        });
        let th = &mut self.threads[t];
        if th.comm.is_empty() {
            th.comm = comm.to_string();
        }
        th.prio = prio;
        t
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

    /// One event, at `ts` on `cpu`.
    pub fn event(&mut self, ts: Ns, cpu: usize, ev: SchedEvent) {
        self.start.get_or_insert(ts);
        self.last = ts;
        match ev {
            SchedEvent::Switch(sw) => {
                self.switch_out(ts, cpu, &sw);
                self.switch_in(ts, cpu, &sw);
            }
            SchedEvent::Waking { waker, target, irq } => self.waking(ts, cpu, waker, target, irq),
            SchedEvent::Rename { pid, comm } => {
                if let Some(&t) = self.by_pid.get(&pid) {
                    self.threads[t].comm = comm.to_string();
                }
            }
            SchedEvent::Frequency { cpu: c, khz } => {
                if c < self.khz.len() {
                    self.frequencies = true;
                    self.account(c, ts);
                    self.khz[c] = khz.min(self.max_khz[c]);
                }
            }
        }
    }

    /// `prev` (0: idle) leaves `cpu` at `ts` in state `prev_state`: asleep, dead, or still
    /// runnable (preempted).
    fn switch_out(&mut self, ts: Ns, cpu: usize, sw: &Switch) {
        self.account(cpu, ts);
        self.running[cpu] = None;
        let prev = sw.prev;
        if prev == 0 {
            return;
        }
        // First seen leaving the CPU: it ran from before the trace.
        let t = self.thread(prev, sw.prev_comm, sw.prev_prio, 0);
        let state = sw.prev_state & STATE_MASK;
        if state & DEAD != 0 {
            // Its last switch, where its program ends: the pid's next thread is another.
            self.flush(t);
            self.by_pid.remove(&prev);
            *self.reused.entry(prev).or_default() += 1;
        } else if state != 0 {
            self.flush(t);
            self.threads[t].asleep = Some(ts);
        }
    }

    /// `next` (0: idle) runs on `cpu` from `ts`.
    fn switch_in(&mut self, ts: Ns, cpu: usize, sw: &Switch) {
        if sw.next == 0 {
            return;
        }
        let since_start = ts - self.start.unwrap_or(ts);
        let t = self.thread(sw.next, sw.next_comm, sw.next_prio, since_start);
        let th = &mut self.threads[t];
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

    const US: Ns = 1000;
    const A: i32 = 101;
    const B: i32 = 102;
    const C: i32 = 103;
    /// `prev_state` of a task going to sleep (TASK_INTERRUPTIBLE) and of one exiting.
    const SLEEP: i64 = 1;
    const EXIT: i64 = 0x10;

    /// A, B and C's comms.
    fn comm(pid: i32) -> &'static str {
        ["", "a", "b", "c"][(pid - 100).clamp(0, 3) as usize]
    }

    fn switch(prev: i32, prev_state: i64, next: i32) -> SchedEvent<'static> {
        SchedEvent::Switch(Switch {
            prev,
            prev_comm: comm(prev),
            prev_state,
            prev_prio: 120,
            next,
            next_comm: comm(next),
            next_prio: 120,
        })
    }

    fn waking(waker: i32, target: i32, irq: bool) -> SchedEvent<'static> {
        SchedEvent::Waking { waker, target, irq }
    }

    fn rebuild(
        platform: &str,
        events: &[(Ns, usize, SchedEvent)],
    ) -> (Vec<Thread>, Ns, Vec<Ns>, Vec<String>) {
        let plat = platform::load_builtin(platform).unwrap();
        let mut rb = Rebuild::new(plat.cpus.len(), &plat, "t.dat").unwrap();
        for &(ts, cpu, ev) in events {
            rb.event(ts, cpu, ev);
        }
        rb.finish()
    }

    /// A pipe ping-pong worked out by hand on smp:4, µs from 0. CPU 1: B runs 0–50 and
    /// sleeps; CPU 0: A runs from 0, wakes B at 100, sleeps at 120. CPU 1: B runs 105–185,
    /// waking A at 180. CPU 0: A runs 190–200. CPU 2: C runs 0–10 and sleeps; a timer
    /// interrupt on CPU 0 (A running) wakes it at 150; it runs 152–160 and exits.
    #[test]
    fn a_ping_pong_becomes_waits_and_posts_and_an_interrupt_a_timer() {
        let (threads, length, busy, notes) = rebuild(
            "smp:4",
            &[
                (0, 0, switch(0, 0, A)),
                (0, 1, switch(0, 0, B)),
                (0, 2, switch(0, 0, C)),
                (10 * US, 2, switch(C, SLEEP, 0)),
                (50 * US, 1, switch(B, SLEEP, 0)),
                (100 * US, 0, waking(A, B, false)),
                (105 * US, 1, switch(0, 0, B)),
                (120 * US, 0, switch(A, SLEEP, 0)),
                (150 * US, 0, waking(A, C, true)),
                (152 * US, 2, switch(0, 0, C)),
                (160 * US, 2, switch(C, EXIT, 0)),
                (180 * US, 1, waking(B, A, false)),
                (185 * US, 1, switch(B, SLEEP, 0)),
                (190 * US, 0, switch(0, 0, A)),
                (200 * US, 3, switch(0, 0, 0)),
            ],
        );
        assert_eq!(length, 200 * US);
        // CPU 0: A 0–120 and 190–200; CPU 1: B 0–50, 105–185; CPU 2: C 0–10, 152–160.
        assert_eq!(busy, [130 * US, 130 * US, 18 * US, 0]);
        assert_eq!(
            notes,
            ["no cpu_frequency event: every CPU at its highest frequency"]
        );
        let thread = |pid: i32| threads.iter().find(|t| t.pid == pid).unwrap();
        let index = |pid: i32| threads.iter().position(|t| t.pid == pid).unwrap();
        use Step::*;
        let (a, b) = (index(A), index(B));
        assert_eq!(
            thread(A).steps,
            [Run(100 * US), Post(b), Run(20 * US), Wait, Run(10 * US)]
        );
        assert_eq!(
            thread(B).steps,
            [Run(50 * US), Wait, Run(75 * US), Post(a), Run(5 * US)]
        );
        assert_eq!(
            thread(C).steps,
            [Run(10 * US), Timer(150 * US), Run(8 * US)]
        );
        let names: Vec<_> = threads.iter().map(Thread::name).collect();
        assert_eq!(names, ["a-101", "b-102", "c-103"]);
        // A woken at 180, on at 190: 10 µs; B at 100, on at 105: 5 µs; C at 150, on at 152.
        let seen = |pid: i32| {
            let o = &thread(pid).observed;
            (o.run_ns, o.wakeups, o.latency.max(), o.migrations)
        };
        assert_eq!(seen(A), (130 * US, 1, 10 * US, 0));
        assert_eq!(seen(B), (130 * US, 1, 5 * US, 0));
        assert_eq!(seen(C), (18 * US, 1, 2 * US, 0));
    }

    /// On hikey960 a big CPU (capacity 1024) at half its highest frequency does half the
    /// work per ns, a LITTLE one (462) at its highest 462/1024 of it.
    #[test]
    fn work_is_scaled_by_capacity_and_frequency() {
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
            .khz as u64;
        let (threads, _, _, notes) = rebuild(
            "hikey960",
            &[
                (
                    0,
                    big,
                    SchedEvent::Frequency {
                        cpu: big,
                        khz: max / 2,
                    },
                ),
                (0, big, switch(0, 0, A)),
                (0, 0, switch(0, 0, B)),
                (1024 * US, big, switch(A, SLEEP, 0)),
                (1024 * US, 0, switch(B, SLEEP, 0)),
            ],
        );
        assert!(notes.is_empty());
        assert_eq!(threads[0].steps, [Step::Run(512 * US)]);
        assert_eq!(threads[1].steps, [Step::Run(462 * US)]);
    }

    /// Pid 101 runs 0–10 µs and exits; a new thread of pid 101 runs 20–50 µs: two threads.
    #[test]
    fn a_pid_reused_after_an_exit_is_another_thread() {
        let (threads, ..) = rebuild(
            "smp:4",
            &[
                (0, 0, switch(0, 0, A)),
                (10 * US, 0, switch(A, EXIT, 0)),
                (20 * US, 0, switch(0, 0, A)),
                (50 * US, 0, switch(A, SLEEP, 0)),
            ],
        );
        let runs: Vec<_> = threads
            .iter()
            .map(|t| (t.name(), t.steps.clone()))
            .collect();
        let (first, second) = (vec![Step::Run(10 * US)], vec![Step::Run(30 * US)]);
        assert_eq!(runs, [("a-101".into(), first), ("a-101.1".into(), second)]);
    }

    /// B is first seen leaving CPU 1 at 5 µs: it ran from before the trace (its start is
    /// the trace's), named by `prev_comm`; what it ran before the trace is unseen.
    #[test]
    fn a_thread_first_seen_leaving_a_cpu_started_with_the_trace() {
        let (threads, ..) = rebuild(
            "smp:4",
            &[(0, 0, switch(0, 0, A)), (5 * US, 1, switch(B, SLEEP, 0))],
        );
        let b = &threads[1];
        assert_eq!((b.name(), b.start, b.steps.len()), ("b-102".into(), 0, 0));
    }

    #[test]
    fn a_trace_with_more_cpus_than_the_platform_is_refused() {
        let plat = platform::load_builtin("smp:2").unwrap();
        let err = Rebuild::new(4, &plat, "t.dat").err().unwrap().to_string();
        assert_eq!(err, "t.dat: the trace has 4 CPUs, platform smp:2 has 2");
    }
}
