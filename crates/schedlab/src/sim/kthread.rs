//! The machine's own kernel threads (`Platform::kthreads`: a Debian guest's kcompactd0,
//! per-CPU kworkers, rcu_preempt): each sleeps on a timer-wheel timer (`schedule_timeout`,
//! which expires on a tick) until the next of its wakeups, whose times repeat every span from
//! the first tick at or after the workload's start, and works that wakeup's time, whatever
//! the workload does. Few and
//! short, they still preempt the workload's tasks and shift where ties of EEVDF's arithmetic
//! fall. Created asleep at boot, they take the first task ids, and are not the workload's: a
//! run ends once the workload's threads have, rt-app's markers and logs and the task
//! summaries leave them out, and the jitter's draws number the workload's threads as without
//! them. `--set kthreads=off`: the workload's threads alone.

use super::engine::Engine;
use super::thread::Step;
use super::SIM_START;
use crate::kernel::Kernel;
use crate::platform::Platform;
use crate::sched::Sched;
use crate::time::Ns;
use crate::workload::gen;
use crate::workload::program::{Op, Program, WORK_UNITS_PER_NS};

/// Append the platform's kernel threads to `prog` as its last task definitions, one each (a
/// per-CPU thread's one per CPU, bound to it), with their wakeups under `kernel`.
pub fn append(prog: &mut Program, plat: &Platform, kernel: Kernel) {
    let n = plat.nr_cpus();
    for k in &plat.kthreads {
        let wakes = k.wakes_for(kernel).iter();
        let ops: Vec<Op> = wakes
            .flat_map(|&(at, ns)| {
                let timeout = Op::Timeout {
                    period: k.span_ns,
                    phase: at,
                };
                [timeout, work(ns)]
            })
            .collect();
        let cpus: Vec<Option<usize>> = match k.per_cpu {
            true => (0..n).map(Some).collect(),
            false => vec![None],
        };
        for cpu in cpus {
            let comm = cpu.map_or(k.comm.into(), |c| k.comm.replace("{cpu}", &c.to_string()));
            // (instance 0: the workload's start forks none; `fork_kthreads` does at boot)
            let def = gen::task(prog, comm, vec![(ops.clone(), 0)], 0, 0) as usize;
            prog.tasks[def].cpus = cpu.map(|c| (0..n).map(|i| i == c).collect());
            prog.kthreads.push(k.pid + cpu.unwrap_or(0) as u32);
        }
    }
}

impl Engine {
    /// Boot's kernel threads, each asleep on its timer's first expiry (its program past its
    /// first `Timeout`): the first task ids. Untraced, as kthreadd's creation of them is long
    /// past when a trace starts.
    pub(super) fn fork_kthreads(&mut self, s: &mut Sched) {
        let first = self.prog.tasks.len() - self.prog.kthreads.len();
        for (def, i) in (first..self.prog.tasks.len()).zip(0..) {
            let id = s.tasks().len() as u32;
            let (_, comm, attr, cpus, thread) = self.new_thread(def, id, false, self.now);
            let cpu = cpus
                .as_ref()
                .map_or(0, |c| c.iter().position(|&on| on).unwrap_or(0));
            let pid = self.prog.kthreads[i];
            s.kthread_asleep((pid, comm), &attr, cpus, cpu, self.now);
            let Op::Timeout { period, phase } =
                self.prog.code.of(&self.prog.tasks[def].phases[0])[0]
            else {
                unreachable!("a kernel thread's program starts with its timeout")
            };
            self.threads.push(thread);
            let at = next_expiry(self.now, self.span_start(s), period, phase);
            self.arm_sleep(s, id, at, at);
        }
    }

    /// How many of the machine's kernel threads there are: the first task ids.
    pub(super) fn kthreads(&self) -> u32 {
        self.prog.kthreads.len() as u32
    }

    /// Task definition `def` is one of the machine's kernel threads.
    pub(super) fn is_kthread_def(&self, def: usize) -> bool {
        def >= self.prog.tasks.len() - self.prog.kthreads.len()
    }

    /// Thread `id` is one of the machine's kernel threads.
    pub(super) fn is_kthread(&self, id: u32) -> bool {
        id < self.kthreads()
    }

    /// Thread `id`'s index among the workload's threads (the jitter's draws are keyed by it).
    pub(super) fn workload_index(&self, id: u32) -> u32 {
        id - self.kthreads()
    }

    /// Where the kernel threads' spans start: the tick nearest the platform's
    /// `kthreads_from` after the workload's start (`Ev::Begin`), shifted by
    /// `kthreads.shift_ns`, so that their timer-wheel wakeups fall on ticks, as the records'
    /// do, whatever phase of a jiffy the workload starts at.
    fn span_start(&self, s: &Sched) -> Ns {
        let f = s.feat();
        let from = self.plat.kthreads_from_for(f.kernel) as i64 + f.kthreads_shift_ns;
        // 1 s or more, and `from` within ±1.1 s: it stays at or past 0.
        let at = (SIM_START + f.rtapp_start_ns).saturating_add_signed(from);
        (at + self.tick_ns / 2) / self.tick_ns * self.tick_ns
    }

    /// `schedule_timeout`: the kernel thread `id` sleeps until its timer's next expiry.
    pub(super) fn timeout(&mut self, s: &mut Sched, id: u32, period: Ns, phase: Ns) -> Step {
        let at = next_expiry(self.now, self.span_start(s), period, phase);
        self.sleep_between(s, id, at, at); // a timer wheel's: no slack
        Step::Off
    }
}

/// `ns` of CPU time at the reference speed.
fn work(ns: Ns) -> Op {
    Op::Work {
        units: ns as u128 * WORK_UNITS_PER_NS,
        us: ns / 1000,
        perf: 0,
    }
}

/// The first `start + phase + k·period` after `now`.
fn next_expiry(now: Ns, start: Ns, period: Ns, phase: Ns) -> Ns {
    let first = start + phase;
    match now.checked_sub(first) {
        None => first,
        Some(since) => first + (since / period + 1) * period,
    }
}
