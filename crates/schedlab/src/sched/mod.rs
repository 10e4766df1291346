//! Mirrors kernel/sched: `Sched` owns all scheduler state (runqueues, tasks, entities, the
//! root domain, switches), behind kernel-named entry points (`core.rs`); it reaches the
//! machine only through `Hooks`.

pub mod class;
pub mod clock_pelt;
mod core;
pub use self::core::Ttwu;
/// `sysctl_sched_migration_cost`.
pub use self::fair::balance::MIGRATION_COST_NS;
pub mod cpupri;
pub mod deadline;
pub mod explain;
pub mod fair;
pub mod features;
pub mod flags;
pub mod hooks;
pub mod hrtick;
pub mod idle;
#[cfg(debug_assertions)]
mod invariants;
pub mod latency;
pub mod ops;
pub mod pelt;
pub mod prandom;
pub mod preempt;
pub mod rq;
pub mod rt;
pub mod rtmutex;
pub mod stats;
pub mod task;
pub mod topology;
pub mod uapi;
pub mod uclamp;
pub mod util_est;
pub mod weight;

use crate::cpufreq::CpuSample;
use crate::platform::OpCosts;
use crate::platform::Platform;
use crate::time::Ns;
use clock_pelt::{CpuScale, RqClock};
use deadline::admission::DlBw;
use deadline::{DlRq, SchedDlEntity};
use fair::bandwidth::ThrottleNode;
use fair::cfs_tasks::GroupNode;
use fair::group::TaskGroup;
use fair::{cpu_util, CfsRq, SchedEntity, Tunables};
use features::{Feat, Features};
use ops::{Op, OpLedger};
use prandom::RndState;
use rq::Rq;
use rt::{RtRq, SchedRtEntity};
use rtmutex::RtMutex;
use std::cell::Cell;
use task::{SchedTask, TaskState};
use topology::perf_domain::PerfDomain;
use topology::Topology;
use uclamp::{UCLAMP_MAX, UCLAMP_MIN};

/// When the kernel booted and built its sched domains: runs start later (`Sched::new`'s
/// `now`), so a domain's first periodic balance comes one interval after boot.
const BOOT: Ns = 0;

/// The kernel's scheduler state, whole.
pub struct Sched {
    pub(in crate::sched) rqs: Vec<Rq>,
    /// The cfs_rqs: CPU `cpu`'s root cfs_rq is `cfs_rqs[cpu]` (`rq->cfs`).
    /// Boxed: a class takes one out (`spare_cfs` in its place) by moving a pointer.
    #[allow(clippy::vec_box)]
    pub(in crate::sched) cfs_rqs: Vec<Box<CfsRq>>,
    /// Takes a cfs_rq's place while the fair class works on it, so that only pointers move.
    pub(in crate::sched) spare_cfs: Option<Box<CfsRq>>,
    /// What the scheduler did on each CPU, by kind.
    pub(in crate::sched) ops: OpLedger,
    /// The task groups: the root first, then each after its parent.
    pub(in crate::sched) tgs: Vec<TaskGroup>,
    pub(in crate::sched) tasks: Vec<SchedTask>,
    pub(in crate::sched) ses: Vec<SchedEntity>,
    /// Every task's links in its CPU's `rq->cfs_tasks` (`se->group_node`).
    pub(in crate::sched) group_nodes: Vec<GroupNode>,
    /// Every task's `se->h_load` under 7.x's flat runqueue (`fair/flat.rs`).
    pub(in crate::sched) h_loads: Vec<weight::LoadWeight>,
    /// Every task's task-based throttling state (`fair/bandwidth.rs`).
    pub(in crate::sched) throttle_nodes: Vec<ThrottleNode>,
    /// The deadline entities: each CPU's fair server (entity `cpu`), then every thread's
    /// `sched_dl_entity` (`tasks[p].dl`; all zero but for SCHED_DEADLINE threads).
    pub(in crate::sched) dls: Vec<SchedDlEntity>,
    /// Every thread's `sched_rt_entity`.
    pub(in crate::sched) rts: Vec<SchedRtEntity>,
    /// The root domain's admitted deadline bandwidth.
    pub(in crate::sched) dl_bw: DlBw,
    /// Threads that admission control refused, one message each.
    pub(in crate::sched) refusals: Vec<String>,
    /// The rt_mutexes (and plain mutexes) of the workload.
    pub(in crate::sched) mutexes: Vec<RtMutex>,
    /// Mutexes are PTHREAD_PRIO_INHERIT (rt_mutexes with priority inheritance).
    pub(in crate::sched) pi: bool,
    /// The sched domains of every CPU, with their balance state.
    pub(in crate::sched) topo: Topology,
    pub(in crate::sched) feat: Features,
    pub(in crate::sched) tun: Tunables,
    /// CPUs of different capacities (`sched_asym_cpucap_active`).
    pub(in crate::sched) asym: bool,
    /// `sched_uclamp_used`.
    pub(in crate::sched) uclamp_used: bool,
    /// `rd->pd`: the perf domains energy-aware placement weighs (none: EAS is off).
    pub(in crate::sched) pd: Vec<PerfDomain>,
    /// `rd->overutilized`: some CPU's utilization does not fit it (EAS stands aside).
    pub(in crate::sched) overutilized: Cell<bool>,
    /// `rd->overloaded` (6.1: `rd->overload`): set when an enqueue gives a CPU a second
    /// task, set or cleared by each balance pass over the root domain's top level.
    pub(in crate::sched) overloaded: Cell<bool>,
    /// The RT period timer (`rt_bandwidth.rt_period_timer`) is armed.
    pub(in crate::sched) rt_period_armed: bool,
    /// Some task is SCHED_IDLE or some group idle: only then can `sched_idle_cpu` hold.
    pub(in crate::sched) sched_idle_used: bool,
    /// `select_rq_mask`: the wakeup scan's working copy of the CPUs left to try.
    select_rq_mask: Vec<bool>,
    /// Threads blocked (on a mutex, condition, barrier, semaphore or resume) and ended:
    /// when they are all the threads, none can ever wake another.
    nr_blocked: u32,
    nr_dead: u32,
    /// Per CPU, `distribute_cpu_mask_prev`: the CPU `cpumask_any_and_distribute` gave last.
    distribute_prev: Vec<usize>,
    /// `smp_processor_id()` where a reschedule may be remote: the CPU doing a wakeup (None
    /// elsewhere: the CPU worked on; `preempt.rs`).
    pub(in crate::sched) this_cpu: Option<usize>,
    /// What the kernel's operations cost here (the cost model's table): a newly idle
    /// balance's duration, which the kernel measures with `sched_clock`, is the price of
    /// the work it did, whether or not the model charges it.
    pub(in crate::sched) costs: OpCosts,
    /// `nohz.next_balance`: when an idle CPU's balance is next due.
    pub(in crate::sched) nohz_next_balance: Ns,
    /// `nohz.has_blocked` and `nohz.next_blocked`: idle CPUs may have blocked load to
    /// decay, at the earliest then.
    pub(in crate::sched) nohz_has_blocked: bool,
    pub(in crate::sched) nohz_next_blocked: Ns,
    /// The decisions being recorded for `compare --explain` (None: not asked).
    pub(in crate::sched) explain: std::cell::RefCell<Option<explain::Explain>>,
}

impl Sched {
    /// The scheduler of `plat` at boot (`sched_init`, `sched_init_smp`): every CPU idle at
    /// `now`, the fair servers admitted.
    pub fn new(plat: &Platform, feat: Features, uclamp_used: bool, now: Ns) -> Sched {
        let tun = Tunables::new(&feat, plat.nr_cpus());
        let costs = plat.costs_for(feat.kernel);
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
                Rq::new(RqClock::new(feat.invariance, scale, now), cap, dl, rt)
            })
            .collect();
        for (cpu, (rq, c)) in rqs.iter_mut().zip(&plat.cpus).enumerate() {
            let states = &plat.freq_domains[c.freq_domain].idle_states;
            rq.idle_exit_latency = states.first().map(|s| s.exit_latency);
            rq.rng = RndState::seeded(feat.seed ^ ((cpu as u64) << 32));
            rq.pressure_averaged = feat.cpufreq_pressure;
        }
        let caps = plat.cpus.iter().map(|c| c.capacity_orig as u64);
        let mut dl_bw = DlBw::new(feat.rt_bandwidth(), caps.clone());
        let mut dls = vec![SchedDlEntity::default(); plat.nr_cpus()];
        if let Some((runtime, period)) = feat.fair_server() {
            deadline::admission::attach_fair_servers(
                &mut rqs, &mut dls, &mut dl_bw, runtime, period,
            );
        }
        let asym = caps.clone().any(|c| c != plat.cpus[0].capacity_orig as u64);
        let topo = Topology::build(plat, BOOT);
        let pd = topology::perf_domain::build_perf_domains(plat, &feat, &topo);
        Sched {
            cfs_rqs: (0..rqs.len()).map(|_| Box::default()).collect(),
            spare_cfs: Some(Box::default()),
            ops: OpLedger::new(rqs.len()),
            tgs: vec![TaskGroup::root()],
            rqs,
            tasks: Vec::new(),
            ses: Vec::new(),
            group_nodes: Vec::new(),
            h_loads: Vec::new(),
            throttle_nodes: Vec::new(),
            dls,
            rts: Vec::new(),
            dl_bw,
            refusals: Vec::new(),
            mutexes: Vec::new(),
            pi: false,
            topo,
            feat,
            tun,
            asym,
            uclamp_used,
            pd,
            overutilized: Cell::new(false),
            overloaded: Cell::new(false),
            rt_period_armed: false,
            sched_idle_used: false,
            select_rq_mask: vec![false; plat.nr_cpus()],
            nr_blocked: 0,
            nr_dead: 0,
            distribute_prev: vec![0; plat.nr_cpus()],
            this_cpu: None,
            costs,
            nohz_next_balance: 0,
            nohz_has_blocked: false,
            nohz_next_blocked: 0,
            explain: Default::default(),
        }
    }

    /// Move thread `id` to `state`, counting the blocked and the ended.
    pub(crate) fn set_state(&mut self, id: u32, state: TaskState, now: Ns) {
        if let Some(n) = self.nr_in(self.tasks[id as usize].state) {
            *n -= 1;
        }
        if let Some(n) = self.nr_in(state) {
            *n += 1;
        }
        self.tasks[id as usize].set_state(state, now);
    }

    /// The count of threads in `state`, for the states counted.
    fn nr_in(&mut self, state: TaskState) -> Option<&mut u32> {
        match state {
            TaskState::Blocked => Some(&mut self.nr_blocked),
            TaskState::Dead => Some(&mut self.nr_dead),
            _ => None,
        }
    }

    /// Some thread is blocked and every other one is blocked or ended, but the machine's
    /// `kthreads` kernel threads, which only sleep on their timers: nobody is left to release
    /// them (the kernel's hung-task detector would name them in the end).
    pub fn deadlocked(&self, kthreads: u32) -> bool {
        let stuck = self.nr_blocked + self.nr_dead + kthreads;
        self.nr_blocked > 0 && stuck as usize == self.tasks.len()
    }

    /// `cpu_util_cfs(cpu)`: the CPU's utilization as schedutil and placement read it.
    pub fn cpu_util(&self, cpu: usize) -> u64 {
        cpu_util::cpu_util(
            cpu,
            &self.cfs_rqs[cpu],
            self.rqs[cpu].capacity,
            None,
            None,
            false,
            self.util_est_on(),
        )
    }

    /// `cpu_util_cfs_boost(cpu)`: the larger of the CPU's utilization and its runnable
    /// average, as schedutil and the balancer's migrate_util read it.
    pub fn cpu_util_cfs_boost(&self, cpu: usize) -> u64 {
        let (rq, cfs, ue) = (&self.rqs[cpu], &self.cfs_rqs[cpu], self.util_est_on());
        cpu_util::cpu_util(cpu, cfs, rq.capacity, None, None, true, ue)
    }

    /// What `cpufreq_update_util`'s governors read of `cpu`'s runqueue (`sugov_get_util`:
    /// the boosted CFS utilization; the idle time and entries are the machine's, left at
    /// zero).
    pub fn cpufreq_util(&self, cpu: usize) -> CpuSample {
        self.cpufreq_sample(cpu, self.cpu_util_cfs_boost(cpu))
    }

    /// What `effective_cpu_util` reads of `cpu`'s runqueue, its boosted CFS utilization
    /// `util_boost` given.
    pub(crate) fn cpufreq_sample(&self, cpu: usize, util_boost: u64) -> CpuSample {
        let (rq, cfs) = (&self.rqs[cpu], &self.cfs_rqs[cpu]);
        let uclamp_max = rq.uclamp.get(UCLAMP_MAX) as u64;
        CpuSample {
            util_boost,
            util_avg: cfs.avg.util_avg,
            capacity: rq.capacity,
            nr_running: cfs.nr_running,
            uclamp_min: rq.uclamp.get(UCLAMP_MIN) as u64,
            uclamp_max,
            // uclamp_rq_is_capped (cfs + rt). Unused uclamp leaves max at 1024.
            uclamp_capped: uclamp_max != pelt::SCHED_CAPACITY_SCALE
                && self.cpu_util(cpu) + rq.avg_rt.util_avg >= uclamp_max,
            rt_max: !self.uclamp_used && rq.rt.runnable(),
            dl_bw: rq.dl.cpu_bw(),
            util_rt: rq.avg_rt.util_avg,
            util_dl: rq.avg_dl.util_avg,
            ..CpuSample::default()
        }
    }

    /// What `cpu_util` reads of task `task`.
    fn task_view(&self, task: u32) -> cpu_util::TaskView<'_> {
        let t = &self.tasks[task as usize];
        let se = &self.ses[t.se as usize];
        cpu_util::TaskView {
            se,
            cpu: t.cpu,
            queued: se.on_rq,
        }
    }

    /// `cpu_util_without(cpu, p)`: the CPU's utilization without task `task`'s share.
    pub fn cpu_util_without(&self, cpu: usize, task: u32) -> u64 {
        let (rq, p) = (&self.rqs[cpu], self.task_view(task));
        cpu_util::cpu_util_without(cpu, &self.cfs_rqs[cpu], rq.capacity, p, self.util_est_on())
    }

    /// `cpu_util(cpu, p, dst_cpu, boost)`: the CPU's utilization were task `task` to run on
    /// `dst` (None: elsewhere).
    pub(crate) fn cpu_util_moved(
        &self,
        cpu: usize,
        task: u32,
        dst: Option<usize>,
        boost: bool,
    ) -> u64 {
        let (rq, p) = (&self.rqs[cpu], Some(self.task_view(task)));
        cpu_util::cpu_util(
            cpu,
            &self.cfs_rqs[cpu],
            rq.capacity,
            p,
            dst,
            boost,
            self.util_est_on(),
        )
    }

    /// `rq->nr_running`: tasks queued in every class, curr and delayed ones included (the
    /// fair class's share is its h_nr_queued, not its root cfs_rq's nr_running).
    pub fn nr_running(&self, cpu: usize) -> u32 {
        self.cfs_rqs[cpu].h_nr_queued + self.rqs[cpu].nr_running_rt_dl()
    }

    /// `idle_cpu`: the idle task runs and nothing is queued.
    pub fn idle_cpu(&self, cpu: usize) -> bool {
        self.rqs[cpu].curr.is_none() && self.nr_running(cpu) == 0
    }

    /// `nr_cpu_ids`: how many CPUs there are.
    #[inline]
    pub fn nr_cpu_ids(&self) -> usize {
        self.rqs.len()
    }

    /// `cpu_rq(cpu)`: a CPU's runqueue, as observers read it (its schedstat, its capacity).
    #[inline]
    pub fn cpu_rq(&self, cpu: usize) -> &Rq {
        &self.rqs[cpu]
    }

    /// `cpu_curr(cpu)`: the task a CPU runs (none: its idle task).
    #[inline]
    pub fn cpu_curr(&self, cpu: usize) -> Option<u32> {
        self.rqs[cpu].curr
    }

    /// `tif_need_resched()` of a CPU's current task: it schedules at its next preemption point.
    #[inline]
    pub fn need_resched(&self, cpu: usize) -> bool {
        self.rqs[cpu].need_resched
    }

    /// The reschedule asked of `cpu` is a lazy one (TIF_NEED_RESCHED_LAZY alone).
    pub fn need_resched_lazy(&self, cpu: usize) -> bool {
        self.rqs[cpu].lazy_asked
    }

    /// `set_tsk_need_resched(rq->curr)`: the machine's own reason to schedule a CPU (an
    /// interrupt that woke it), or its acting on a reschedule asked; one asked lazily stays
    /// so for a task in a system call (`lazy_asked`).
    #[inline]
    pub fn set_need_resched(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        (rq.need_resched, rq.lazy) = (true, false);
    }

    /// Task `p`'s scheduler half, read-only.
    #[inline]
    pub fn task(&self, p: u32) -> &SchedTask {
        &self.tasks[p as usize]
    }

    /// Every task, by id (what a tracepoint's ids index).
    #[inline]
    pub fn tasks(&self) -> &[SchedTask] {
        &self.tasks
    }

    /// `task_cpu(p)`.
    #[inline]
    pub fn task_cpu(&self, p: u32) -> usize {
        self.tasks[p as usize].cpu
    }

    /// The task groups, the root first.
    pub fn task_groups(&self) -> &[TaskGroup] {
        &self.tgs
    }

    /// The switches this scheduler runs with.
    #[inline]
    pub fn feat(&self) -> &Features {
        &self.feat
    }

    /// The sysctls and per-platform tunables.
    pub fn tun(&self) -> &Tunables {
        &self.tun
    }

    /// What the scheduler did on each CPU, by kind.
    #[inline]
    pub fn ops(&self) -> &OpLedger {
        &self.ops
    }

    /// Count `n` operations `op` on `cpu` that the machine did on the kernel's behalf (an
    /// hrtimer interrupt, a system call).
    #[inline]
    pub fn count_op(&mut self, cpu: usize, op: Op, n: u64) {
        self.ops.add(cpu, op, n);
    }

    /// A CPU whose operation counts changed since it was last taken.
    #[inline]
    pub fn take_counted_cpu(&mut self) -> Option<usize> {
        self.ops.take_moved()
    }

    /// The run's end: every live task's state time charged up to `end`.
    pub fn account_states(&mut self, end: Ns) {
        for t in &mut self.tasks {
            if t.state != TaskState::Dead {
                let st = t.state;
                t.set_state(st, end);
            }
        }
    }

    /// The threads SCHED_DEADLINE admission control refused, each with why.
    pub fn refusals(&self) -> &[String] {
        &self.refusals
    }

    /// What the kernel's operations cost here (the cost model's table for this kernel).
    pub fn costs(&self) -> &OpCosts {
        &self.costs
    }

    /// The root domain's deadline bandwidth (`rd->dl_bw`).
    pub fn dl_bw(&self) -> &DlBw {
        &self.dl_bw
    }

    /// The sched domains.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// `p->dl`: task `p`'s deadline entity.
    pub fn dl_of(&self, p: u32) -> &SchedDlEntity {
        &self.dls[self.tasks[p as usize].dl as usize]
    }

    pub fn dl_of_mut(&mut self, p: u32) -> &mut SchedDlEntity {
        &mut self.dls[self.tasks[p as usize].dl as usize]
    }

    pub fn util_est_on(&self) -> bool {
        self.feat.has(Feat::UtilEst)
    }
}

#[cfg(test)]
pub(crate) mod tests;
