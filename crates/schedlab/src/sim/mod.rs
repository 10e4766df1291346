//! The discrete-event engine: time, work and threads. It runs the workload's thread programs
//! on a machine (`engine.rs`) and calls the scheduler (`sched::Sched`) where the kernel
//! would; the scheduler answers through `sched::Hooks`, and observers (`trace`) are told
//! what happened.

pub mod cache;
mod channel;
pub mod cpufreq;
mod cpuidle;
pub mod cyclictest;
mod engine;
pub mod event;
mod hrtimer;
#[cfg(debug_assertions)]
mod invariants;
mod jitter;
mod kernel_preempt;
mod kthread;
mod overhead;
pub mod schbench;
pub mod summary;
mod thread;

use crate::energy::Meter;
use crate::error::InputError;
use crate::limits::{MAX_GROUP_CPUS, MAX_SIM_NS};
use crate::platform::Platform;
use crate::sched::features::Features;
use crate::sched::Sched;
use crate::time::Ns;
use crate::trace::Observer;
use crate::workload::rtapp::{compile, RtappModel};
use crate::workload::Workload;
use cache::CacheModel;
pub use cpufreq::Cpufreq;
use engine::{Cpu, Engine};
use event::{Ev, EventQueue};
use hrtimer::HrTimers;
use overhead::Overhead;
use thread::Resources;
pub use thread::RtappStats;

/// The simulated clock at the start of a run: 1 s after boot, so that no PELT timestamp is 0
/// (the kernel's "not attached" mark).
pub const SIM_START: Ns = 1_000_000_000;

/// Events at one instant after which the run is a livelock (a loop of zero-length sleeps
/// or runs goes through the queue): far above what 32,768 threads waking together make.
const MAX_EVENTS_AT_ONE_INSTANT: u32 = 1 << 20;

/// Options of a run beyond workload, platform and switches.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides the workload's `global.duration`.
    pub duration: Option<Ns>,
    /// `--cgroup PATH:KEY=VALUE[,…]` descriptions.
    pub cgroups: Vec<String>,
    /// `--idle-cgroups N`: empty groups.
    pub idle_cgroups: u64,
}

/// Per-run totals.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// Events that did something: wakeups, ends of work, ticks of busy CPUs (not the stale
    /// entries of a preempted piece of work or a cancelled timer).
    pub events: u64,
    pub end: Ns,
    /// Set when the run stopped because no thread could ever proceed.
    pub deadlock: Option<String>,
    /// When a benchmark's main process took the time it starts its tasks at (`Op::Clock`).
    pub bench_start: Option<Ns>,
}

/// A run: the scheduler, and the machine with its threads.
pub struct Sim {
    sched: Sched,
    eng: Engine,
    /// Events in a row at the current instant (a livelock past `MAX_EVENTS_AT_ONE_INSTANT`).
    same_instant: u32,
}

/// What one event did to the run.
pub(crate) enum Step {
    Go,
    /// The run is over: stopped at its duration (`shutdown`), or every thread ended or none
    /// can proceed.
    End {
        shutdown: bool,
    },
}

impl Sim {
    /// Check the workload against the platform and build the machine.
    pub fn new(
        wl: &Workload,
        plat: Platform,
        feat: Features,
        opts: &RunOptions,
    ) -> Result<Sim, InputError> {
        let rtapp = RtappModel {
            custom_slice: feat.rtapp_custom_slice,
            start_barrier: feat.rtapp_start_barrier,
        };
        let mut prog = compile(wl, &plat, rtapp).map_err(|e| e.within(&wl.origin))?;
        for spec in &opts.cgroups {
            prog.groups.describe(spec)?;
        }
        prog.groups.add_idle(opts.idle_cgroups)?;
        if prog.groups.groups.len() * plat.nr_cpus() > MAX_GROUP_CPUS {
            return Err(InputError::option(
                "idle_cgroups",
                format!(
                    "{} cgroups on {} CPUs are too many: at most {MAX_GROUP_CPUS} (cgroup, CPU) pairs",
                    prog.groups.groups.len(),
                    plat.nr_cpus()
                ),
            ));
        }
        let notes: Vec<String> = prog.groups.notes().collect();
        prog.warnings.extend(notes);
        if !prog.channels.is_empty() && !feat.overhead {
            prog.warnings.push("pipes and sockets cost nothing with overhead=off: their system calls and copies take no time, so readers and writers pass messages at one instant".into());
        }
        let duration = opts.duration.or(wl.global.duration);
        if let Some(d) = opts.duration.filter(|&d| !(1..=MAX_SIM_NS).contains(&d)) {
            return Err(InputError::option(
                "duration",
                format!("{d} ns is out of range: 1 ns to {MAX_SIM_NS} ns (366 days)"),
            ));
        }
        if duration.is_none() {
            if let Some(t) = prog.runs_for_ever() {
                return Err(InputError::option(
                    "duration",
                    format!("task {t:?} loops for ever and the workload has no global.duration: give one"),
                ));
            }
        }
        if feat.kthreads {
            kthread::append(&mut prog, &plat, feat.kernel);
        }
        if !feat.work_jitter {
            prog.tasks.iter_mut().for_each(|t| t.work_stretch.clear()); // as calibrated
        }
        let cache = match (feat.cache, plat.cache) {
            (false, _) => None,
            (true, Some(spec)) => Some(CacheModel::new(spec, &plat)),
            (true, None) => {
                return Err(InputError::option(
                    "set",
                    format!(
                    "cache=on: platform {} describes no caches (a [cache] table: docs/cache.md)",
                    plat.name
                ),
                ))
            }
        };
        let nr_cpus = plat.nr_cpus();
        let cpus = plat
            .cpus
            .iter()
            .map(|c| Cpu {
                rate: c.capacity_orig as u128 * 1024,
                done_gen: 0,
                tick_armed: false,
                busy_ns: 0,
                busy_since: None,
                idle_calls: 0,
                changed_at: 0,
                awake: false,
                asleep: false,
                waking: 0,
                irq_rest: Vec::new(),
            })
            .collect();
        let cpufreq = Cpufreq::new(&plat, &feat, SIM_START)?;
        let top = plat.freq_domains.iter().map(|d| d.opps.len() - 1).collect();
        let energy = Meter::new(&plat, top, SIM_START);
        let next_timers = cpuidle::NextTimers::new(&plat);
        let mut sched = Sched::new(&plat, feat, prog.uses_uclamp(), SIM_START);
        for g in &prog.groups.groups[1..] {
            let max = g.max.map(|(quota, period)| (quota * 1000, period * 1000));
            sched.sched_create_group(g.path.clone(), g.parent, g.shares, g.idle, max);
        }
        let res = Resources::new(&prog, nr_cpus);
        sched.init_mutexes(prog.nr_mutexes(), prog.pi);
        let eng = Engine {
            overhead: Overhead::new(sched.feat().overhead, *sched.costs(), nr_cpus),
            cache,
            now: SIM_START,
            tick_ns: sched.feat().tick_ns(),
            seed: sched.feat().seed,
            irq_jitter_ns: sched.feat().irq_jitter_ns.unwrap_or(plat.irq_jitter_ns),
            work_stretch: (plat.work_stretch.iter().copied())
                .filter(|_| sched.feat().work_jitter)
                .collect(),
            plat,
            cpus,
            cpufreq,
            energy,
            queue: EventQueue::default(),
            prog,
            threads: Vec::new(),
            res,
            observers: Vec::new(),
            tracing: false,
            // the workload's duration, from its beginning
            stop_at: duration.map(|d| SIM_START + sched.feat().rtapp_start_ns + d),
            totals: Totals::default(),
            io_error: None,
            last_thread: 0,
            nested_runs: 0,
            woken: Vec::new(),
            going_to_sleep: vec![false; nr_cpus],
            in_irq: false,
            deferred_wakes: 0,
            booting: false,
            alive: 0,
            hrtimers: HrTimers::new(nr_cpus),
            next_timers,
            fired: Vec::new(),
            all_cpus: vec![true; nr_cpus],
        };
        Ok(Sim {
            sched,
            eng,
            same_instant: 0,
        })
    }

    /// Attach an observer (trace writer, logs): records are built only when one is attached.
    pub fn observe(&mut self, mut o: Box<dyn Observer>) {
        let paths: Vec<String> = self
            .sched
            .task_groups()
            .iter()
            .map(|g| g.path.clone())
            .collect();
        o.groups(&paths);
        self.eng.observers.push(o);
        self.eng.tracing = true;
    }

    /// Run to the end: the workload's duration, or until every thread has ended. Every
    /// 100 ms of simulated time, `progress(simulated, total)` may stop the run by returning
    /// false: then the observers are not finished and the result is false.
    pub fn run(
        &mut self,
        mut progress: impl FnMut(Ns, Option<Ns>) -> bool,
    ) -> std::io::Result<bool> {
        self.start();
        let mut next_report = self.eng.now;
        let shutdown = loop {
            if let Step::End { shutdown } = self.step()? {
                break shutdown;
            }
            let e = &self.eng;
            if e.now >= next_report {
                if !progress(e.now - SIM_START, e.stop_at.map(|s| s - SIM_START)) {
                    return Ok(false);
                }
                next_report = e.now + 100_000_000;
            }
        };
        self.eng.finish(&mut self.sched, shutdown).map(|()| true)
    }

    /// Boot the machine and queue the run's first events.
    pub(crate) fn start(&mut self) {
        let (s, e) = (&mut self.sched, &mut self.eng);
        e.start(s);
        if let Some(at) = e.stop_at {
            e.queue.push(at, e.now, Ev::Stop);
        }
        s.start_bandwidth(e);
    }

    /// The next event: what it did to the run.
    #[inline(always)]
    pub(crate) fn step(&mut self) -> std::io::Result<Step> {
        let (s, e) = (&mut self.sched, &mut self.eng);
        if e.deferred_wakes == 0 && s.deadlocked(e.kthreads()) {
            e.report_deadlock(s);
        }
        if e.totals.deadlock.is_some() {
            return Ok(Step::End { shutdown: false });
        }
        let Some((at, ev)) = e.queue.pop() else {
            return Ok(Step::End { shutdown: false });
        };
        if at - SIM_START > MAX_SIM_NS {
            e.totals.deadlock = Some(format!("the workload runs past the longest simulated time ({} s, 366 days) without ending: give a shorter duration", MAX_SIM_NS / 1_000_000_000));
            return Ok(Step::End { shutdown: false });
        }
        self.same_instant = if at == e.now {
            self.same_instant + 1
        } else {
            0
        };
        e.now = at;
        let live = match ev {
            Ev::Stop => return Ok(Step::End { shutdown: true }),
            Ev::Begin => {
                e.begin(s);
                true
            }
            Ev::Cap { policy, step, hw } => {
                e.cap(s, policy as usize, step as usize, hw);
                true
            }
            Ev::Wake { task, gen, kicked } => e.timer_fired(s, task, gen, kicked),
            Ev::Wakeup {
                task,
                gen,
                waker,
                flags,
                irq,
            } => e.deferred_wake(s, task, gen, (waker as usize, irq), flags as u32),
            Ev::Activate { task, flags } => {
                e.ttwu_activate(s, task, flags as u32);
                true
            }
            Ev::Done { cpu, gen } => e.work_done(s, cpu as usize, gen),
            Ev::Tick { cpu } => e.tick(s, cpu as usize),
            Ev::Sched(t) => e.sched_timer(s, t),
            Ev::SchedIrq(t) => s.timer(t, e),
        };
        e.totals.events += live as u64;
        while let Some(cpu) = s.take_counted_cpu() {
            e.overhead.sync(cpu, e.now, s.ops().of(cpu));
        }
        #[cfg(debug_assertions)]
        e.check_invariants(s);
        if let Some(err) = e.io_error.take() {
            return Err(err);
        }
        if self.same_instant > MAX_EVENTS_AT_ONE_INSTANT {
            e.livelock(s, e.now);
        }
        if e.alive == 0 {
            return Ok(Step::End { shutdown: false });
        }
        Ok(Step::Go)
    }

    /// Record every scheduling decision from now on (`Sched::take_decisions`).
    pub fn explain(&mut self) {
        self.sched.explain();
    }

    /// The scheduler's decisions since last taken, moved into `into` (empty).
    pub fn take_decisions(&mut self, into: &mut Vec<crate::sched::explain::Decision>) {
        self.sched.take_decisions(into)
    }

    /// The simulated clock.
    pub fn now(&self) -> Ns {
        self.eng.now
    }

    /// The scheduler's state.
    pub fn sched(&self) -> &Sched {
        &self.sched
    }

    /// The platform simulated.
    pub fn platform(&self) -> &Platform {
        &self.eng.plat
    }

    /// Energy per CPU and cluster.
    pub fn energy(&self) -> &Meter {
        &self.eng.energy
    }

    pub fn totals(&self) -> &Totals {
        &self.eng.totals
    }

    /// What the workload asks for that the engine does not simulate yet.
    pub fn warnings(&self) -> &[String] {
        &self.eng.prog.warnings
    }

    /// Simulated time elapsed.
    pub fn elapsed(&self) -> Ns {
        self.eng.totals.end.max(self.eng.now) - SIM_START
    }
}

#[cfg(test)]
mod tests;
