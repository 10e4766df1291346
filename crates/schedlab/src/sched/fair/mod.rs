//! The fair class (kernel/sched/fair.c): entities, cfs_rqs, enqueue/dequeue, pick, tick and
//! wakeup preemption, with EEVDF (6.6+) or CFS (≤6.5) deciding who runs.
//!
//! Queued entities wait in the cfs_rq's timeline (`timeline.rs`), ordered and searched as the
//! kernel's augmented rb-tree. `Fair` works on one level of the hierarchy: a
//! cfs_rq and its entities, tasks or groups (`group.rs`); the fair class's operations
//! (`sched_class.rs`) walk the levels as `for_each_sched_entity` does.

pub mod balance;
pub mod bandwidth;
pub mod blocked;
pub mod capacity;
mod cfs;
pub mod cfs_tasks;
pub mod cpu_util;
pub(in crate::sched) mod eevdf;
pub use eevdf::{DelayedLag, LagLimit, WakeupPreempt};
mod flat;
pub use flat::Runqueue;
pub mod group;
pub mod h_load;
pub mod load_avg;
mod overutilized;
pub mod protect_slice;
mod reweight;
pub mod sched_class;
pub mod timeline;
pub mod wakeup;

use crate::sched::clock_pelt::RqClock;
use crate::sched::features::{FairPolicy, Feat, Features};
use crate::sched::flags::*;
use crate::sched::hooks::RqHooks;
use crate::sched::ops::CpuOps;
use crate::sched::pelt::SchedAvg;
use crate::sched::util_est::UtilEst;
use crate::sched::weight::{calc_delta_fair, scale_load_down, LoadWeight};
use crate::time::Ns;
use crate::tracepoint::{Note, Tracepoint};
use bandwidth::TaskLink;
use cfs_tasks::{CfsTasks, GroupNode};
use group::{TaskGroup, TgId};
use timeline::{Key, Timeline};

/// Index of an entity in the entity arena (a task's entity has its task's index).
pub type SeId = u32;

/// What a wakeup's preemption check knows of the woken task beyond its entity.
pub struct Waking {
    /// SCHED_OTHER (BATCH and IDLE never preempt).
    pub normal: bool,
    /// Its entity is a delayed dequeue's.
    pub delayed: bool,
    /// The wakeup's WF_* flags.
    pub flags: u32,
}

/// `(s64)(a - b)`: how the kernel compares vruntimes and deadlines, across the u64 wrap.
#[inline(always)]
fn vdiff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

/// `min_vruntime`: the earlier of two vruntimes in that order.
#[inline(always)]
fn min_vruntime(a: u64, b: u64) -> u64 {
    if vdiff(b, a) < 0 {
        b
    } else {
        a
    }
}

/// A cfs_rq's id in `Sched::cfs_rqs`.
pub type CfsRqId = u32;
/// The `task` of a group entity.
pub const NO_TASK: u32 = u32::MAX;

/// `struct sched_entity`.
#[derive(Debug, Clone)]
pub struct SchedEntity {
    /// `task_of(se)`: the task it schedules (`NO_TASK` for a group's entity).
    pub task: u32,
    /// `se->cfs_rq`: the cfs_rq it is (to be) queued on (`set_task_rq`).
    pub cfs_rq: CfsRqId,
    /// `se->parent`: the entity of the group it is in (none in the root group).
    pub parent: Option<SeId>,
    /// `se->my_q`: a group entity's own cfs_rq.
    pub my_q: Option<CfsRqId>,
    /// `se->depth`: 0 in the root group.
    pub depth: u32,
    /// `se->runnable_weight`: a group entity's runnable count (its cfs_rq's h_nr_runnable).
    pub runnable_weight: u32,
    pub load: LoadWeight,
    pub on_rq: bool,
    pub sched_delayed: bool,
    pub vruntime: u64,
    pub deadline: u64,
    pub slice: u64,
    /// EEVDF virtual lag.
    pub vlag: i64,
    /// `se->vprot` (6.17+; 6.12's mark in vlag): how far the running entity's slice is
    /// protected (`protect_slice.rs`).
    pub vprot: u64,
    pub custom_slice: bool,
    pub rel_deadline: bool,
    pub exec_start: Ns,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub avg: SchedAvg,
    pub util_est: UtilEst,
    /// SCHED_IDLE (`se_is_idle`).
    pub idle: bool,
    /// SCHED_OTHER (`normal_policy`): BATCH and IDLE never wakeup-preempt.
    pub normal: bool,
    /// Its node in its cfs_rq's timeline while queued and not curr (`timeline::NIL` else).
    pub run_node: u32,
}

impl SchedEntity {
    pub fn new(task: u32, load: LoadWeight, util_est: UtilEst) -> SchedEntity {
        SchedEntity {
            task,
            cfs_rq: 0,
            parent: None,
            my_q: None,
            depth: 0,
            runnable_weight: 0,
            load,
            on_rq: false,
            sched_delayed: false,
            vruntime: 0,
            deadline: 0,
            slice: 0,
            vlag: 0,
            vprot: 0,
            custom_slice: false,
            rel_deadline: false,
            exec_start: 0,
            sum_exec_runtime: 0,
            prev_sum_exec_runtime: 0,
            avg: SchedAvg::default(),
            util_est,
            idle: false,
            normal: true,
            run_node: timeline::NIL,
        }
    }

    /// `entity_is_task`.
    #[inline(always)]
    pub fn is_task(&self) -> bool {
        self.my_q.is_none()
    }

    /// `se_runnable`: what PELT counts as runnable (6.12: a delayed entity is not).
    #[inline(always)]
    pub fn runnable(&self) -> u64 {
        match (self.sched_delayed, self.my_q) {
            (true, _) => 0,
            (false, None) => self.on_rq as u64,
            (false, Some(_)) => self.runnable_weight as u64,
        }
    }

    /// `se_weight`: the unscaled weight PELT uses.
    #[inline(always)]
    pub fn weight(&self) -> u64 {
        scale_load_down(self.load.weight)
    }

    /// `se->h_load`: the weight EEVDF gives the entity. Under 7.x's flat runqueue
    /// (`h_loads`: every task's, by task) a task's share of its CPU down its groups
    /// (`flat.rs`); else its load weight.
    #[inline(always)]
    pub fn h_load(&self, h_loads: Option<&[LoadWeight]>) -> LoadWeight {
        match h_loads {
            Some(h) if self.is_task() => h[self.task as usize],
            _ => self.load,
        }
    }

    /// The weight `avg_vruntime` sums (`avg_vruntime_weight`): `se_weight` (≤6.18), the
    /// whole `h_load` under 7.x's flat runqueue.
    #[inline(always)]
    pub fn avg_weight(&self, h_loads: Option<&[LoadWeight]>) -> u64 {
        match h_loads {
            Some(_) => self.h_load(h_loads).weight,
            None => scale_load_down(self.load.weight),
        }
    }
}

/// Load removed from a cfs_rq by a task that left it (`cfs_rq->removed`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Removed {
    pub nr: u32,
    pub load_avg: u64,
    pub util_avg: u64,
    pub runnable_avg: u64,
}

/// `struct cfs_rq`.
#[derive(Debug, Clone, Default)]
pub struct CfsRq {
    /// `cfs_rq->tg`: the group it queues for (`ROOT_TG` for a CPU's `rq->cfs`).
    pub tg: TgId,
    /// What it last added to `tg->load_avg`, and when (the 6.7+ rate limit).
    pub tg_load_avg_contrib: u64,
    pub last_update_tg_load_avg: Ns,
    /// PELT changes below to pass up to the group entity (`add_tg_cfs_propagate`).
    pub propagate: bool,
    pub prop_runnable_sum: i64,
    /// `cfs_rq->h_load` and the jiffy it was computed at (`update_cfs_rq_h_load`).
    pub h_load: u64,
    pub last_h_load_update: u64,
    /// CFS bandwidth (`bandwidth.rs`): out of runtime (`throttled`), how many levels from
    /// here up are (`throttle_count`), and the PELT time its clock spent stopped (the frozen
    /// `cfs_rq_clock_pelt` while it is: `CfsRq::pelt_frozen`).
    pub throttled: bool,
    pub throttle_count: u32,
    pub throttled_clock_pelt: Ns,
    /// `throttled_limbo_list` (6.18+): the first of its tasks dequeued on their way to
    /// user space while it was throttled (the most recent), each task's `ThrottleNode`
    /// naming the next.
    pub limbo: TaskLink,
    /// On its CPU's leaf list (`blocked.rs`), and how many of its children's cfs_rqs are.
    pub on_list: bool,
    pub children_on_list: u32,
    pub load: LoadWeight,
    /// Entities queued, curr included.
    pub nr_running: u32,
    pub h_nr_queued: u32,
    /// Queued and not delayed.
    pub h_nr_runnable: u32,
    /// EEVDF: Σ (v_i − v0)·w_i and Σ w_i over the queued entities but curr.
    pub avg_vruntime: i64,
    pub avg_load: u64,
    /// `cfs_rq->min_vruntime`: CFS's monotonic floor; under EEVDF the reference point v0 of
    /// its weighted sums, which 6.x's `zero_vruntime` tracks in its place.
    pub min_vruntime: u64,
    pub curr: Option<SeId>,
    /// `cfs_rq->h_curr` (7.x's name): the level's running entity, charged by `update_curr`.
    /// Under the flat runqueue `curr` is the running task on the root's tree alone; else
    /// the two are one.
    pub h_curr: Option<SeId>,
    /// `tasks_timeline`: the queued entities other than curr, in key order (EEVDF: virtual
    /// deadline, CFS: vruntime; equal keys in queueing order).
    pub timeline: Timeline,
    /// How many of the timeline's entities have a custom slice (`cfs_rq_min_slice`).
    pub nr_custom_slice: u32,
    pub next: Option<SeId>,
    pub last: Option<SeId>,
    pub skip: Option<SeId>,
    pub avg: SchedAvg,
    /// The root cfs_rq's util_est: Σ of the enqueued tasks' estimates.
    pub util_est: u32,
    pub removed: Removed,
    /// Set by `cfs_rq_util_change`; the core passes it on to cpufreq.
    pub util_changed: bool,
}

/// Fair tunables scaled for the machine at boot (`update_sysctl`).
#[derive(Debug, Clone, Copy)]
pub struct Tunables {
    pub policy: FairPolicy,
    pub base_slice: u64,
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
    /// `sched_nr_latency` = latency / min_granularity.
    pub nr_latency: u32,
    pub tick_ns: u64,
}

impl Tunables {
    pub fn new(f: &Features, nr_cpus: usize) -> Tunables {
        let factor = f.factor(nr_cpus);
        Tunables {
            policy: f.fair,
            base_slice: f.base_slice_ns * factor,
            latency: f.latency_ns * factor,
            min_granularity: f.min_granularity_ns * factor,
            wakeup_granularity: f.wakeup_granularity_ns * factor,
            nr_latency: (f.latency_ns / f.min_granularity_ns).max(1) as u32,
            tick_ns: f.tick_ns(),
        }
    }
}

/// One CPU's fair class at work: its cfs_rq, the entities, the clock and the switches.
pub struct Fair<'a, 'n> {
    /// The level's cfs_rq, taken out of `cfs_rqs` while the class works on it.
    pub cfs: &'a mut CfsRq,
    /// The other cfs_rqs: parents, and a group entity's own (`group_cfs_rq`).
    pub cfs_rqs: &'a mut [Box<CfsRq>],
    /// The CPU's root cfs_rq (`rq->cfs`), when it is not `cfs`.
    pub root: CfsRqId,
    pub tgs: &'a mut [TaskGroup],
    /// `rq->cfs_tasks` of this CPU, and every task's links (`se->group_node`).
    pub cfs_tasks: &'a mut CfsTasks,
    pub group_nodes: &'a mut [GroupNode],
    /// Every task's `se->h_load` under 7.x's flat runqueue (`flat.rs`).
    pub h_loads: &'a mut [LoadWeight],
    pub ses: &'a mut [SchedEntity],
    pub clock: &'a RqClock,
    /// This CPU's operation counts.
    pub ops: CpuOps<'a>,
    pub feat: &'a Features,
    pub tun: &'a Tunables,
    /// `arch_scale_cpu_capacity` of this CPU.
    pub capacity: u64,
    /// The machine: the bandwidth timers, and the tracepoints (`pelt_se_tp`, `pelt_cfs_tp`,
    /// `sched_util_est_*_tp`) when tracing.
    pub hooks: &'a mut RqHooks<'n>,
    /// `resched_curr` asked by the operation (a cfs_rq out of runtime, curr's request served).
    pub resched: bool,
    /// Running time `update_curr` charged and the fair server has not yet been told of
    /// (`dl_server_update`, done by the class interface after the operation).
    pub server_delta: u64,
    /// Under the flat runqueue, a running task's time `update_curr` charged on a group's
    /// level, for its vruntime on the root's tree (done by the class interface after the
    /// operation).
    pub task_delta: Option<(SeId, u64)>,
}

impl Fair<'_, '_> {
    #[inline(always)]
    fn se(&mut self, id: SeId) -> &mut SchedEntity {
        &mut self.ses[id as usize]
    }

    /// `rq->cfs`.
    fn root_cfs(&self) -> &CfsRq {
        if self.cfs.tg == group::ROOT_TG {
            self.cfs
        } else {
            &self.cfs_rqs[self.root as usize]
        }
    }

    fn is_eevdf(&self) -> bool {
        self.tun.policy == FairPolicy::Eevdf
    }

    /// 7.x's flat runqueue (`flat.rs`).
    #[inline(always)]
    fn flat(&self) -> bool {
        self.feat.flat()
    }

    /// The tasks' `h_load` if the runqueue is flat (`SchedEntity::h_load`).
    #[inline(always)]
    fn h_loads(&self) -> Option<&[LoadWeight]> {
        self.flat().then_some(&*self.h_loads)
    }

    /// `se->h_load` of entity `id`.
    #[inline(always)]
    fn h_load(&self, id: SeId) -> LoadWeight {
        self.ses[id as usize].h_load(self.h_loads())
    }

    /// The weight of entity `id` in `avg_vruntime`.
    #[inline(always)]
    fn avg_weight(&self, id: SeId) -> u64 {
        self.ses[id as usize].avg_weight(self.h_loads())
    }

    /// `update_curr`: charge curr for the time since `exec_start`; true asks for a resched.
    pub fn update_curr(&mut self) -> bool {
        let Some(id) = self.cfs.h_curr else {
            return false;
        };
        let now = self.clock.clock_task;
        let se = &mut self.ses[id as usize];
        let delta = now as i64 - se.exec_start as i64;
        if delta <= 0 {
            return false;
        }
        se.exec_start = now;
        se.sum_exec_runtime += delta as u64;
        let is_task = se.is_task();
        if is_task {
            self.server_delta += delta as u64;
        }
        self.account_cfs_rq_runtime(delta as u64);
        if self.flat() {
            return is_task && flat::charge_task(self, id, delta as u64);
        }
        let se = &mut self.ses[id as usize];
        se.vruntime = se
            .vruntime
            .wrapping_add(calc_delta_fair(delta as u64, &se.load));
        if self.is_eevdf() {
            // 6.12's update_curr calls resched_curr itself once the request is served.
            let resched = eevdf::after_update_curr(self, id);
            self.resched |= resched;
            resched
        } else {
            cfs::update_min_vruntime(self);
            false
        }
    }

    /// `update_curr` unless curr already left the queue (the pick's charge: its
    /// put_prev_entity may not have run).
    pub fn update_queued_curr(&mut self) {
        if self.cfs.h_curr.is_some_and(|c| self.ses[c as usize].on_rq) {
            self.update_curr();
        }
    }

    /// `account_entity_enqueue`: a task joins the head of `rq->cfs_tasks`.
    fn account_enqueue(&mut self, id: SeId) {
        let se = &self.ses[id as usize];
        self.cfs.load.add(se.load.weight);
        self.cfs.nr_running += 1;
        if se.is_task() {
            self.cfs_tasks.push(self.group_nodes, se.task);
        }
    }

    /// `account_entity_dequeue`.
    fn account_dequeue(&mut self, id: SeId) {
        let se = &self.ses[id as usize];
        self.cfs.load.sub(se.load.weight);
        self.cfs.nr_running -= 1;
        let task = se.task;
        if se.is_task() && self.cfs_tasks.contains(self.group_nodes, task) {
            self.cfs_tasks.remove(self.group_nodes, task);
        }
    }

    /// The timeline's key: the virtual deadline under EEVDF, vruntime under CFS.
    fn key(&self) -> Key {
        if self.is_eevdf() {
            Key::Deadline
        } else {
            Key::Vruntime
        }
    }

    /// `__enqueue_entity`: into the timeline, after the entities with the same key.
    fn enqueue_tree(&mut self, id: SeId) {
        if self.is_eevdf() {
            eevdf::avg_vruntime_add(self, id);
        }
        let key = self.key();
        self.cfs.timeline.insert(self.ses, key, id);
        self.cfs.nr_custom_slice += self.ses[id as usize].custom_slice as u32;
    }

    /// `__dequeue_entity`: out of the timeline.
    fn dequeue_tree(&mut self, id: SeId) {
        if self.cfs.timeline.contains(self.ses, id) {
            self.cfs.timeline.remove(self.ses, id);
            self.cfs.nr_custom_slice -= self.ses[id as usize].custom_slice as u32;
            if self.is_eevdf() {
                eevdf::avg_vruntime_sub(self, id);
            }
        }
    }

    /// `util_est_enqueue(&rq->cfs, p)`, on the root level, unless a delayed task moves.
    pub fn util_est_enqueue(&mut self, id: SeId, flags: u32) {
        let se = &self.ses[id as usize];
        if self.feat.has(Feat::UtilEst) && !(se.sched_delayed && flags & ENQUEUE_MIGRATED != 0) {
            let est = se.util_est;
            crate::sched::util_est::util_est_enqueue(&mut self.cfs.util_est, &est);
            self.note_util_est_cfs();
        }
    }

    /// `util_est_dequeue(&rq->cfs, p)`, on the root level, then `util_est_update` where
    /// the form samples before the dequeue (6.8+); true when it is left for after it.
    pub fn util_est_dequeue(&mut self, id: SeId, flags: u32) -> bool {
        let se = &self.ses[id as usize];
        let migrating = flags & DEQUEUE_MIGRATING != 0;
        if self.feat.has(Feat::UtilEst)
            && !(se.sched_delayed && migrating)
            && flags & DEQUEUE_DELAYED == 0
        {
            let est = se.util_est;
            crate::sched::util_est::util_est_dequeue(&mut self.cfs.util_est, &est);
            self.note_util_est_cfs();
        }
        if flags & DEQUEUE_DELAYED != 0 {
            return false;
        }
        let sample_first = self.feat.util_est_sample.before_dequeue_update();
        if sample_first {
            self.util_est_update(id, flags & DEQUEUE_SLEEP != 0);
        }
        !sample_first
    }

    /// `enqueue_entity` (7.x's flat runqueue: its load only).
    pub fn enqueue_entity(&mut self, id: SeId, flags: u32) {
        if self.flat() {
            flat::enqueue_entity(self, id, flags);
        } else if self.is_eevdf() {
            eevdf::enqueue_entity(self, id, flags);
        } else {
            cfs::enqueue_entity(self, id, flags);
        }
    }

    /// `dequeue_entity`: false when the dequeue is delayed (6.12 DELAY_DEQUEUE): the entity
    /// sleeps but competes until its lag is paid back.
    pub fn dequeue_entity(&mut self, id: SeId, flags: u32) -> bool {
        if self.flat() {
            flat::dequeue_entity(self, id, flags);
            true
        } else if self.is_eevdf() {
            eevdf::dequeue_entity(self, id, flags)
        } else {
            cfs::dequeue_entity(self, id, flags);
            true
        }
    }

    /// `requeue_delayed_entity`: a delayed sleeper woke before being picked.
    pub fn requeue_delayed_entity(&mut self, id: SeId) {
        eevdf::requeue_delayed_entity(self, id);
    }

    /// `util_est_update(cfs_rq, p, task_sleep)`.
    pub fn util_est_update(&mut self, id: SeId, task_sleep: bool) {
        if !self.feat.has(Feat::UtilEst) {
            return;
        }
        let cap = self.feat.util_est_sample.capacity_rule(self.capacity);
        let se = self.se(id);
        let (util, runnable) = (se.avg.util_avg, se.avg.runnable_avg);
        se.util_est.update(util, runnable, cap, task_sleep);
        if task_sleep {
            let (est, util, task) = (se.util_est, se.avg.util_avg, se.task);
            let ewma = match est {
                UtilEst::Ewma(v) => v & !crate::sched::util_est::UTIL_AVG_UNCHANGED,
                UtilEst::EnqueuedEwma { ewma, .. } => ewma,
            };
            self.note(Note::UtilEstSe {
                task,
                enqueued: est.task_util_est(),
                ewma,
                util,
            });
        }
    }

    /// Fire a tracepoint when tracing.
    #[inline(always)]
    pub(crate) fn note(&mut self, note: Note) {
        let hooks = &mut *self.hooks;
        if hooks.tracing {
            let (cpu, task) = (hooks.cpu, hooks.curr);
            hooks.trace(Tracepoint::Fair { cpu, task, note });
        }
    }

    /// `trace_pelt_se_tp(se)`.
    pub(super) fn note_pelt_se(&mut self, id: SeId) {
        if !self.hooks.tracing {
            return;
        }
        let se = &self.ses[id as usize];
        let (a, task) = (se.avg, se.task);
        let path = se
            .my_q
            .map_or(group::ROOT_TG, |q| self.cfs_rqs[q as usize].tg);
        self.note(Note::PeltSe {
            task,
            path,
            load: a.load_avg,
            runnable: a.runnable_avg,
            util: a.util_avg,
            update_time: a.last_update_time,
        });
    }

    /// `trace_pelt_cfs_tp(cfs_rq)`.
    pub(super) fn note_pelt_cfs(&mut self) {
        let a = self.cfs.avg;
        let path = self.cfs.tg;
        self.note(Note::PeltCfs {
            path,
            load: a.load_avg,
            runnable: a.runnable_avg,
            util: a.util_avg,
            update_time: a.last_update_time,
        });
    }

    /// `cfs_rq_util_change`: only the root cfs_rq's utilization drives cpufreq.
    pub(super) fn cfs_rq_util_change(&mut self) {
        if self.cfs.tg == group::ROOT_TG {
            self.cfs.util_changed = true;
        }
    }

    fn note_util_est_cfs(&mut self) {
        let (enqueued, util) = (self.cfs.util_est, self.cfs.avg.util_avg);
        self.note(Note::UtilEstCfs { enqueued, util });
    }

    /// `pick_next_entity`: a delayed entity picked is for the caller to dequeue.
    pub fn pick_next_entity(&mut self) -> Option<SeId> {
        if eevdf::nr_queued(self) == 0 {
            return None;
        }
        if self.is_eevdf() {
            eevdf::pick_next_entity(self, true)
        } else {
            cfs::pick_next_entity(self)
        }
    }

    /// `set_next_entity` (7.x's flat runqueue: the level's `h_curr` only; the task leaves
    /// the root's tree in `flat::set_next_task`).
    pub fn set_next_entity(&mut self, id: SeId) {
        let (flat, on_rq) = (self.flat(), self.ses[id as usize].on_rq);
        if !flat {
            self.clear_buddies(id);
        }
        if on_rq {
            if !flat {
                self.dequeue_tree(id);
            }
            load_avg::update_load_avg(self, id, load_avg::UPDATE_TG);
        }
        self.cfs.h_curr = Some(id);
        if !flat {
            self.cfs.curr = Some(id);
            if self.is_eevdf() && on_rq {
                protect_slice::set_protect_slice(self, id);
            }
        }
        let now = self.clock.clock_task;
        let se = self.se(id);
        se.exec_start = now;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
    }

    /// `put_prev_entity` (7.x's flat runqueue: the level's `h_curr` only).
    pub fn put_prev_entity(&mut self, id: SeId) {
        let flat = self.flat();
        if self.ses[id as usize].on_rq {
            self.update_curr();
            if !flat {
                self.enqueue_tree(id);
            }
            load_avg::update_load_avg(self, id, 0);
        }
        self.cfs.h_curr = None;
        if !flat {
            self.cfs.curr = None;
        }
    }

    /// `entity_tick` (+ CFS's `check_preempt_tick`): true asks for a resched.
    pub fn entity_tick(&mut self, id: SeId) -> bool {
        let resched = self.update_curr();
        load_avg::update_load_avg(self, id, load_avg::UPDATE_TG);
        self.update_cfs_group(id);
        if self.is_eevdf() {
            resched
        } else {
            resched || (self.cfs.nr_running > 1 && cfs::check_preempt_tick(self, id))
        }
    }

    /// `check_preempt_wakeup_fair` at the level where the running `curr` and the woken `p`
    /// (or their groups) meet: should `p`'s side preempt?
    pub fn check_preempt_wakeup(&mut self, curr: SeId, p: SeId, w: &Waking) -> bool {
        if self.is_eevdf() {
            eevdf::check_preempt_wakeup(self, curr, p, w)
        } else {
            cfs::check_preempt_wakeup(self, curr, p)
        }
    }

    /// `yield_task_fair`.
    pub fn yield_task(&mut self, id: SeId) {
        if self.is_eevdf() {
            eevdf::yield_task(self, id);
        } else {
            self.update_curr();
            cfs::yield_task(self, id);
        }
    }

    /// Placement of a new task at fork (`task_fork_fair` for CFS; nothing for EEVDF, which
    /// places at `wake_up_new_task`).
    pub fn task_fork(&mut self, id: SeId) {
        if !self.is_eevdf() {
            cfs::task_fork(self, id);
        }
    }

    /// `migrate_task_rq_fair` on the old CPU: a waking task is normalised against its
    /// min_vruntime (CFS) and its load removed; a migrating one was detached at its dequeue.
    pub fn migrate_task_rq(&mut self, id: SeId, migrating: bool) {
        if !migrating {
            if !self.is_eevdf() {
                let min = self.cfs.min_vruntime;
                let se = self.se(id);
                se.vruntime = se.vruntime.wrapping_sub(min);
            }
            load_avg::remove_entity_load_avg(self, id);
        }
        let se = self.se(id);
        se.avg.last_update_time = 0;
        se.exec_start = 0;
    }

    /// `clear_buddies`: each buddy that is `id` is cleared here and, while the parent's
    /// same buddy is the parent entity, up the hierarchy (`__clear_buddies_next` etc.).
    fn clear_buddies(&mut self, id: SeId) {
        type Buddy = fn(&mut CfsRq) -> &mut Option<SeId>;
        let kinds: [Buddy; 3] = [|c| &mut c.next, |c| &mut c.last, |c| &mut c.skip];
        for buddy in kinds {
            if *buddy(self.cfs) != Some(id) {
                continue;
            }
            *buddy(self.cfs) = None;
            let mut up = self.ses[id as usize].parent;
            while let Some(pe) = up {
                let q = &mut self.cfs_rqs[self.ses[pe as usize].cfs_rq as usize];
                if *buddy(q) != Some(pe) {
                    break;
                }
                *buddy(q) = None;
                up = self.ses[pe as usize].parent;
            }
        }
    }

    /// EEVDF's weighted lags sum: Σ w_i·(V − v_i) over the queued entities, curr included.
    pub fn weighted_lag_sum(&mut self) -> i128 {
        let v = eevdf::avg_vruntime(self);
        let curr = self.cfs.curr.filter(|&c| self.ses[c as usize].on_rq);
        let (ses, h_loads) = (&*self.ses, self.h_loads());
        self.cfs
            .timeline
            .iter()
            .chain(curr)
            .map(|i| {
                let se = &ses[i as usize];
                se.avg_weight(h_loads) as i128 * v.wrapping_sub(se.vruntime) as i64 as i128
            })
            .sum()
    }
}
