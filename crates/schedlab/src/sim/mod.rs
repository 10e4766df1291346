//! The discrete-event engine: per-CPU runqueues, schedule(), try_to_wake_up, the tick, work
//! accounting, and the rt-app programs the threads run.
//!
//! The engine knows no policy: it asks the scheduling classes (`sched::class`) who runs and
//! where, and observers (`trace`) are told what happened.

mod core;
pub mod cpufreq;
mod deadline;
pub mod event;
mod pi;
mod rt;
mod rtapp;
pub mod task;

use crate::energy::Meter;
use crate::error::InputError;
use crate::platform::Platform;
use crate::sched::clock_pelt::{CpuScale, RqClock};
use crate::sched::deadline::admission::DlBw;
use crate::sched::deadline::{DlRq, SchedDlEntity};
use crate::sched::fair::{capacity, cpu_util, SchedEntity, Tunables};
use crate::sched::features::{Feat, Features};
use crate::sched::rq::Rq;
use crate::sched::rt::{RtRq, SchedRtEntity};
use crate::time::Ns;
use crate::trace::{Observer, Record};
use crate::workload::Workload;
use cpufreq::Cpufreq;
use event::{Ev, EventQueue};
use rtapp::{Program, Resources, ThreadProg};
use task::{State, Task};

/// The simulated clock at the start of a run: 1 s after boot, so that no PELT timestamp is 0
/// (the kernel's "not attached" mark).
pub const SIM_START: Ns = 1_000_000_000;

/// What the engine keeps per CPU beside the scheduler's `Rq`.
pub struct Cpu {
    /// Work units per ns: capacity·freq_scale (both /1024).
    pub rate: u128,
    /// Generation of the pending `Done` event.
    pub done_gen: u32,
    pub tick_armed: bool,
    pub busy_ns: Ns,
    pub busy_since: Option<Ns>,
    /// Times the CPU went idle (`tick_nohz_get_idle_calls_cpu`).
    pub idle_calls: u64,
    /// The busy balance interval of the CPU's lowest domain (None: no domain).
    pub balance_interval: Option<Ns>,
    /// When that domain is next balanced (`sd->last_balance` + interval).
    pub next_balance: Ns,
}

/// Options of a run beyond workload, platform and switches.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides the workload's `global.duration`.
    pub duration: Option<Ns>,
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
}

pub struct Sim {
    pub now: Ns,
    pub plat: Platform,
    pub feat: Features,
    pub tun: Tunables,
    pub rqs: Vec<Rq>,
    pub cpus: Vec<Cpu>,
    pub cpufreq: Cpufreq,
    pub energy: Meter,
    pub tasks: Vec<Task>,
    pub ses: Vec<SchedEntity>,
    /// Every thread's `sched_dl_entity` (all zero but for SCHED_DEADLINE threads).
    pub dls: Vec<SchedDlEntity>,
    /// Every thread's `sched_rt_entity`.
    pub rts: Vec<SchedRtEntity>,
    /// The root domain's admitted bandwidth.
    pub dl_bw: DlBw,
    /// CPUs of different capacities (`sched_asym_cpucap_active`).
    asym: bool,
    /// Threads that admission control refused, one message each.
    pub refusals: Vec<String>,
    queue: EventQueue,
    prog: Program,
    threads: Vec<ThreadProg>,
    res: Resources,
    observers: Vec<Box<dyn Observer>>,
    tracing: bool,
    /// `sched_uclamp_used`.
    uclamp_used: bool,
    stop_at: Option<Ns>,
    pub totals: Totals,
    io_error: Option<std::io::Error>,
}

impl Sim {
    /// Check the workload against the platform and build the machine.
    pub fn new(
        wl: &Workload,
        plat: Platform,
        feat: Features,
        opts: &RunOptions,
    ) -> Result<Sim, InputError> {
        let prog = Program::compile(wl, &plat).map_err(|e| e.within(&wl.origin))?;
        let duration = opts.duration.or(wl.global.duration);
        if duration.is_none() {
            if let Some(t) = prog.runs_for_ever() {
                return Err(InputError::new(
                    "--duration",
                    format!("task {t:?} loops for ever and the workload has no global.duration: give --duration"),
                ));
            }
        }
        let tun = Tunables::new(&feat, plat.nr_cpus());
        let mut rqs: Vec<Rq> = plat
            .cpus
            .iter()
            .map(|c| {
                let cap = c.capacity_orig as u64;
                let scale = CpuScale {
                    cpu: cap,
                    freq: 1024,
                };
                let mut dl = DlRq::new(feat.rt_bandwidth());
                dl.grub = feat.grub;
                let rt = RtRq::new(feat.rt_throttle(), feat.rr_timeslice_ticks());
                Rq::new(RqClock::new(feat.invariance, scale, SIM_START), cap, dl, rt)
            })
            .collect();
        let caps = plat.cpus.iter().map(|c| c.capacity_orig as u64);
        let mut dl_bw = DlBw::new(feat.rt_bandwidth(), caps.clone());
        if let Some((runtime, period)) = feat.fair_server() {
            deadline::attach_fair_servers(&mut rqs, &mut dl_bw, runtime, period);
        }
        let asym = caps.clone().any(|c| c != plat.cpus[0].capacity_orig as u64);
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
                balance_interval: plat.lowest_domain_weight(c.id).map(|w| {
                    capacity::busy_balance_interval(w as u64, feat.hz as u64) * feat.tick_ns()
                }),
                next_balance: 0,
            })
            .collect();
        let cpufreq = Cpufreq::new(&plat, &feat, SIM_START)?;
        let top = plat.freq_domains.iter().map(|d| d.opps.len() - 1).collect();
        let energy = Meter::new(&plat, top, SIM_START);
        let res = prog.resources();
        let uclamp_used = prog.uses_uclamp();
        Ok(Sim {
            now: SIM_START,
            plat,
            feat,
            tun,
            rqs,
            cpus,
            cpufreq,
            energy,
            tasks: Vec::new(),
            ses: Vec::new(),
            dls: Vec::new(),
            rts: Vec::new(),
            dl_bw,
            asym,
            refusals: Vec::new(),
            queue: EventQueue::default(),
            prog,
            threads: Vec::new(),
            res,
            observers: Vec::new(),
            tracing: false,
            uclamp_used,
            stop_at: duration.map(|d| SIM_START + d),
            totals: Totals::default(),
            io_error: None,
        })
    }

    /// Attach an observer (trace writer, logs): records are built only when one is attached.
    pub fn observe(&mut self, o: Box<dyn Observer>) {
        self.observers.push(o);
        self.tracing = true;
    }

    /// Tell the observers; an I/O error stops the run at the next event.
    #[inline]
    fn emit(&mut self, rec: Record) {
        for o in &mut self.observers {
            if let Err(e) = o.record(self.now, &rec, &self.tasks) {
                self.io_error.get_or_insert(e);
            }
        }
    }

    /// Run to the end: the workload's duration, or until every thread has ended.
    pub fn run(&mut self, mut progress: impl FnMut(Ns, Option<Ns>)) -> std::io::Result<()> {
        self.start();
        if let Some(at) = self.stop_at {
            self.queue.push(at, self.now, Ev::Stop);
        }
        self.arm_rt_period();
        let mut next_report = self.now;
        while let Some((at, ev)) = self.queue.pop() {
            self.now = at;
            let live = match ev {
                Ev::Stop => break,
                Ev::Wake { task, gen } => self.timer_fired(task, gen),
                Ev::Done { cpu, gen } => self.work_done(cpu as usize, gen),
                Ev::Tick { cpu } => self.tick(cpu as usize),
                Ev::Dl { task, kind, gen } => self.dl_timer_fired(task, kind, gen),
                Ev::DlServer { cpu, kind, gen } => {
                    self.dl_server_timer_fired(cpu as usize, kind, gen)
                }
                Ev::RtPeriod => self.rt_period_timer(),
            };
            self.totals.events += live as u64;
            if let Some(e) = self.io_error.take() {
                return Err(e);
            }
            if self.totals.deadlock.is_some() {
                break;
            }
            if self.now >= next_report {
                progress(self.now - SIM_START, self.stop_at.map(|s| s - SIM_START));
                next_report = self.now + 100_000_000;
            }
            if self.queue.is_empty() {
                self.check_deadlock();
            }
        }
        self.finish()
    }

    /// Threads that can never proceed: report them, as the kernel's hung-task detector would.
    fn check_deadlock(&mut self) {
        let stuck: Vec<String> = self
            .tasks
            .iter()
            .filter(|t| t.state == State::Blocked)
            .map(|t| format!("{} ({})", t.comm, self.res.blocked_on(t.pid)))
            .collect();
        if !stuck.is_empty() {
            self.totals.deadlock = Some(format!(
                "deadlock at {:.6} s: {} can never proceed",
                (self.now - SIM_START) as f64 / 1e9,
                stuck.join(", ")
            ));
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        let end = self.now;
        self.totals.end = end;
        for t in &mut self.tasks {
            if t.state != State::Dead {
                let s = t.state;
                t.set_state(s, end);
            }
        }
        for c in &mut self.cpus {
            if let Some(since) = c.busy_since.take() {
                c.busy_ns += end - since;
            }
        }
        self.cpufreq.finish(end);
        self.energy.finish(end);
        let tasks = std::mem::take(&mut self.tasks);
        let mut result = Ok(());
        for o in &mut self.observers {
            if let Err(e) = o.finish(&tasks) {
                result = Err(e);
            }
        }
        self.tasks = tasks;
        result
    }

    /// What the workload asks for that the engine does not simulate yet.
    pub fn warnings(&self) -> &[String] {
        &self.prog.warnings
    }

    /// `cpu_util_cfs(cpu)`: the CPU's utilization as schedutil and placement read it.
    pub fn cpu_util(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        cpu_util::cpu_util(
            cpu,
            &rq.cfs,
            rq.capacity,
            None,
            None,
            false,
            self.util_est_on(),
        )
    }

    /// `cpu_util_without(cpu, p)`: the CPU's utilization without task `task`'s share.
    pub fn cpu_util_without(&self, cpu: usize, task: u32) -> u64 {
        let rq = &self.rqs[cpu];
        let t = &self.tasks[task as usize];
        let p = cpu_util::TaskView {
            se: &self.ses[task as usize],
            cpu: t.cpu,
            queued: self.ses[task as usize].on_rq,
        };
        cpu_util::cpu_util_without(cpu, &rq.cfs, rq.capacity, p, self.util_est_on())
    }

    fn util_est_on(&self) -> bool {
        self.feat.has(Feat::UtilEst)
    }

    /// Simulated time elapsed.
    pub fn elapsed(&self) -> Ns {
        self.totals.end.max(self.now) - SIM_START
    }
}

#[cfg(test)]
mod tests;
