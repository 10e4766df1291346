//! SCHED_DEADLINE (kernel/sched/deadline.c): the constant bandwidth server per task (budget,
//! throttling, replenishment, the wakeup rules), the active/inactive states that GRUB
//! reclaims from, and the per-rq bandwidth sums, in the kernel's fixed point.

pub mod admission;
pub mod cpudl;
pub mod grub;
mod push_pull;
pub use push_pull::DlPrioChanged;
pub mod sched_class;
pub mod server;
mod timers;

use crate::sched::clock_pelt::CpuScale;
use crate::sched::flags::*;
use crate::sched::hooks::{RqHooks, SchedTimer};
use crate::sched::pelt::cap_scale;
use crate::time::Ns;
use crate::tracepoint::{DlNote, Tracepoint};
use grub::Grub;

/// `BW_SHIFT`: bandwidths are fractions of 2^20.
pub const BW_SHIFT: u32 = 20;
pub const BW_UNIT: u64 = 1 << BW_SHIFT;
/// `RATIO_SHIFT`: `bw_ratio` is 1/Umax in 2^8 fixed point.
pub const RATIO_SHIFT: u32 = 8;
/// `DL_SCALE`: the overflow check works in µs (2^10 ns).
const DL_SCALE: u32 = 10;

/// `to_ratio(period, runtime)` (core.c).
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    (runtime << BW_SHIFT) / period
}

/// `dl_time_before(a, b)`: wrap-safe a < b.
#[inline]
pub fn before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// A timer of an entity; a new generation makes an armed event stale (`hrtimer_cancel`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer {
    pub armed: bool,
    pub gen: u32,
}

impl Timer {
    fn cancel(&mut self) {
        self.armed = false;
        self.gen = self.gen.wrapping_add(1);
    }

    /// `hrtimer_start`: a new generation, armed.
    fn arm(&mut self) -> u32 {
        self.cancel();
        self.armed = true;
        self.gen
    }
}

/// The two hrtimers of a `sched_dl_entity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DlTimer {
    /// `dl_timer`: replenishment at the next period.
    Replenish,
    /// `inactive_timer`: the 0-lag time of a blocked task.
    Inactive,
}

/// Per-task outcome of the reservation, for the run summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct DlStats {
    /// Throttles at budget exhaustion (`dl_runtime_exceeded`), yields excluded.
    pub exhaustions: u64,
    /// Time spent throttled while runnable.
    pub throttled_ns: Ns,
    pub throttled_since: Option<Ns>,
    /// Scheduling deadlines passed with budget left and work pending.
    pub misses: u64,
    last_miss: u64,
    /// GRUB: time run beyond the budget consumed.
    pub reclaimed_ns: Ns,
}

/// The reservation a CBS runs by (`pi_of(dl_se)`'s runtime, deadline and period).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DlParams {
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
}

/// `struct sched_dl_entity`.
#[derive(Debug, Clone, Default)]
pub struct SchedDlEntity {
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    pub dl_bw: u64,
    pub dl_density: u64,
    /// SCHED_FLAG_RECLAIM.
    pub reclaim: bool,
    /// Remaining budget q (ns, may go negative by an overrun).
    pub runtime: i64,
    /// Absolute scheduling deadline d.
    pub deadline: u64,
    pub throttled: bool,
    pub yielded: bool,
    pub non_contending: bool,
    /// `on_dl_rq`: in the rb-tree (the running task stays in it).
    pub on_rq: bool,
    pub exec_start: Ns,
    /// The task it schedules (`dl_task_of`); None for a CPU's fair server.
    pub task: Option<u32>,
    /// `nr_cpus_allowed > 1`.
    pub migratable: bool,
    pub dl_timer: Timer,
    pub inactive_timer: Timer,
    pub stats: DlStats,
    /// `dl_defer`: a deferred server, which runs only once its laxity is zero.
    pub defer: bool,
    /// `dl_defer_armed`: throttled until the zero-laxity instant d − q.
    pub defer_armed: bool,
    /// `dl_defer_running`: starvation started it; it throttles and replenishes as a task.
    pub defer_running: bool,
    /// `dl_server_active`.
    pub server_active: bool,
    /// `dl_defer_idle` (idle_wait): idle time used the budget up and started this period;
    /// the zero-laxity timer stops the server unless fair time runs first.
    pub defer_idle: bool,
    /// `pi_se` while a deadline waiter boosts the entity (`rt_mutex_setprio`): the donor's
    /// parameters. A copy stands for the kernel's pointer: rt-app never changes them.
    pub pi: Option<DlParams>,
}

impl SchedDlEntity {
    /// `__setparam_dl` (ns).
    pub fn new(runtime: u64, deadline: u64, period: u64, reclaim: bool) -> SchedDlEntity {
        SchedDlEntity {
            dl_runtime: runtime,
            dl_deadline: deadline,
            dl_period: period,
            dl_bw: to_ratio(period, runtime),
            dl_density: to_ratio(deadline, runtime),
            reclaim,
            ..Default::default()
        }
    }

    /// `pi_of`: the donor's reservation while boosted, else the entity's own.
    pub fn pi_of(&self) -> DlParams {
        self.pi.unwrap_or(DlParams {
            runtime: self.dl_runtime,
            deadline: self.dl_deadline,
            period: self.dl_period,
        })
    }

    /// `is_dl_boosted`.
    pub fn boosted(&self) -> bool {
        self.pi.is_some()
    }

    /// The entity's `kind` timer.
    fn timer(&mut self, kind: DlTimer) -> &mut Timer {
        match kind {
            DlTimer::Replenish => &mut self.dl_timer,
            DlTimer::Inactive => &mut self.inactive_timer,
        }
    }

    /// Is `gen` the armed generation of the entity's `kind` timer (not cancelled since)?
    pub fn timer_pending(&mut self, kind: DlTimer, gen: u32) -> bool {
        let t = self.timer(kind);
        t.armed && t.gen == gen
    }

    /// `dl_is_implicit`.
    fn implicit(&self) -> bool {
        self.dl_deadline == self.dl_period
    }

    /// `dl_next_period`.
    pub fn next_period(&self) -> u64 {
        self.deadline
            .wrapping_sub(self.dl_deadline)
            .wrapping_add(self.dl_period)
    }

    /// `dl_entity_overflow(dl_se, t)`: q/(d − t) > Q/D, compared in µs products.
    fn overflow(&self, t: u64) -> bool {
        let pi = self.pi_of();
        let left = (pi.deadline >> DL_SCALE).wrapping_mul((self.runtime >> DL_SCALE) as u64);
        let right =
            (self.deadline.wrapping_sub(t) >> DL_SCALE).wrapping_mul(pi.runtime >> DL_SCALE);
        before(right, left)
    }

    /// `replenish_dl_new_period`: a deferred server not handling starvation waits again.
    fn new_period(&mut self, now: Ns) {
        let pi = self.pi_of();
        self.deadline = now + pi.deadline;
        self.runtime = pi.runtime as i64;
        if self.defer && !self.defer_running {
            self.set_throttled(true, now);
            self.defer_armed = true;
        }
    }

    /// The zero-laxity instant d − q, when a deferred server must start to keep its budget.
    fn zero_laxity(&self) -> u64 {
        (self.deadline as i64 - self.runtime) as u64
    }

    /// A deadline passed with budget left: count it once.
    fn check_miss(&mut self, now: Ns) -> bool {
        let missed = self.runtime > 0 && before(self.deadline, now);
        if missed && self.stats.last_miss != self.deadline {
            self.stats.last_miss = self.deadline;
            self.stats.misses += 1;
            return true;
        }
        false
    }

    fn set_throttled(&mut self, on: bool, now: Ns) {
        self.throttled = on;
        if on {
            self.stats.throttled_since.get_or_insert(now);
        } else if let Some(s) = self.stats.throttled_since.take() {
            self.stats.throttled_ns += now - s;
        }
    }
}

/// `struct dl_rq`: the EDF queue and the bandwidth sums GRUB reads (all ×2^20).
#[derive(Debug, Clone)]
pub struct DlRq {
    /// (deadline, arrival, task), earliest first: the rb-tree, equal deadlines in FIFO order.
    queue: Vec<(u64, u64, u32)>,
    seq: u64,
    /// Σ u of the active (contending and non-contending) tasks.
    pub running_bw: u64,
    /// Σ u of every task of this rq, inactive ones included.
    pub this_bw: u64,
    /// Umax − Σ_rd u / #cpus.
    pub extra_bw: u64,
    /// Umax.
    pub max_bw: u64,
    /// 1/Umax, 2^8 fixed point.
    pub bw_ratio: u64,
    /// Σ u of the active reclaiming tasks (pillai-2023 only).
    pub reclaim_bw: u64,
    pub grub: Grub,
}

impl DlRq {
    /// `init_dl_rq` + `init_dl_rq_bw_ratio`; `rt` is (rt_period, rt_runtime) in µs, None for
    /// RUNTIME_INF.
    pub fn new(rt: Option<(u64, u64)>) -> DlRq {
        let (max_bw, bw_ratio) = match rt {
            None => (BW_UNIT, 1 << RATIO_SHIFT),
            Some((period, runtime)) => (
                to_ratio(period, runtime),
                to_ratio(runtime, period) >> (BW_SHIFT - RATIO_SHIFT),
            ),
        };
        DlRq {
            queue: Vec::new(),
            seq: 0,
            running_bw: 0,
            this_bw: 0,
            extra_bw: max_bw,
            max_bw,
            bw_ratio,
            reclaim_bw: 0,
            grub: Grub::Mainline,
        }
    }

    /// `dl_nr_running`.
    pub fn nr_running(&self) -> u32 {
        self.queue.len() as u32
    }

    /// The leftmost entity.
    pub fn first(&self) -> Option<u32> {
        self.queue.first().map(|e| e.2)
    }

    /// `earliest_dl.curr`: the earliest deadline queued.
    pub fn earliest(&self) -> Option<u64> {
        self.queue.first().map(|e| e.0)
    }

    /// Queued tasks, earliest deadline first.
    pub fn queued(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.queue.iter().map(|e| (e.0, e.2))
    }

    /// `__enqueue_dl_entity`.
    fn insert(&mut self, deadline: u64, p: u32) {
        let at = self.queue.partition_point(|e| !before(deadline, e.0));
        self.queue.insert(at, (deadline, self.seq, p));
        self.seq += 1;
    }

    /// `__dequeue_dl_entity`.
    fn remove(&mut self, p: u32) {
        if let Some(i) = self.queue.iter().position(|e| e.2 == p) {
            self.queue.remove(i);
        }
    }

    /// `add_running_bw` / `sub_running_bw` (the reclaiming share too, for pillai-2023).
    fn add_running(&mut self, se: &SchedDlEntity) {
        self.running_bw += se.dl_bw;
        if se.reclaim {
            self.reclaim_bw += se.dl_bw;
        }
    }

    fn sub_running(&mut self, se: &SchedDlEntity) {
        self.running_bw = self.running_bw.saturating_sub(se.dl_bw);
        if se.reclaim {
            self.reclaim_bw = self.reclaim_bw.saturating_sub(se.dl_bw);
        }
    }

    /// `__dl_update`: this CPU's share of an admission change.
    pub fn update_extra(&mut self, delta: i64) {
        self.extra_bw = self.extra_bw.wrapping_add(delta as u64);
    }

    /// `cpu_bw_dl`: running_bw in capacity units.
    pub fn cpu_bw(&self) -> u64 {
        (self.running_bw << 10) >> BW_SHIFT
    }
}

/// One CPU's deadline class at work.
pub struct Dl<'a> {
    pub dl: &'a mut DlRq,
    /// Every deadline entity: the CPUs' fair servers, the tasks'.
    pub ses: &'a mut [SchedDlEntity],
    /// `rq->fair_server`: its entity's id.
    pub server: u32,
    /// `rq_clock`: deadlines run on wall time.
    pub now: Ns,
    /// `rq_clock_task`: budgets are charged on task time (equal in schedlab: no IRQ time).
    pub clock_task: Ns,
    pub scale: CpuScale,
    /// The running task's entity.
    pub curr: Option<u32>,
    /// The machine: its timers, its tracepoints.
    pub hooks: RqHooks<'a>,
}

impl Dl<'_> {
    /// Trace what happened to entity `p` (a task's: the fair server's are not traced).
    fn note(&mut self, p: u32, note: DlNote) {
        if let Some(task) = self.ses[p as usize].task.filter(|_| self.hooks.tracing) {
            let cpu = self.hooks.cpu;
            self.hooks.trace(Tracepoint::Dl { cpu, task, note });
        }
    }

    /// Arm entity `p`'s timer at `at`.
    fn arm(&mut self, p: u32, kind: DlTimer, at: Ns) {
        let gen = self.ses[p as usize].timer(kind).arm();
        let timer = SchedTimer::Dl { se: p, kind, gen };
        self.hooks.arm(at.max(self.now), timer);
    }

    /// `start_dl_timer`: arm the replenishment at the next period (a deferred server's at
    /// its zero-laxity instant); false when that instant is already a µs or more past.
    fn start_dl_timer(&mut self, p: u32) -> bool {
        let se = &mut self.ses[p as usize];
        let act = if se.defer_armed {
            se.zero_laxity()
        } else {
            se.next_period()
        };
        if (act as i64 - self.now as i64) / 1000 < 0 {
            return false;
        }
        if !se.dl_timer.armed {
            self.arm(p, DlTimer::Replenish, act);
        }
        true
    }

    /// `replenish_dl_entity`, by the donor's reservation when boosted. A task boosted from
    /// another class, or a deferred server that could not use its budget in the
    /// background, starts a new period; a server not handling starvation is deferred again.
    fn replenish(&mut self, p: u32) {
        let now = self.now;
        let se = &mut self.ses[p as usize];
        let pi = se.pi_of();
        if se.dl_deadline == 0 || (se.defer_armed && se.overflow(now)) {
            se.deadline = now + pi.deadline;
            se.runtime = pi.runtime as i64;
        }
        if se.yielded && se.runtime > 0 {
            se.runtime = 0;
        }
        while se.runtime <= 0 {
            se.deadline += pi.period;
            se.runtime += pi.runtime as i64;
        }
        if before(se.deadline, now) {
            se.new_period(now); // "DL replenish lagged too much"
        }
        se.yielded = false;
        se.set_throttled(false, now);
        self.note_budget(p);
        let se = &mut self.ses[p as usize];
        if se.defer_armed {
            se.defer_armed = false;
        } else if se.defer && !se.defer_running && before(now, se.zero_laxity()) {
            se.defer_armed = true;
            se.set_throttled(true, now);
            if !self.start_dl_timer(p) {
                let se = &mut self.ses[p as usize];
                se.dl_timer.cancel();
                se.defer_armed = false;
                se.set_throttled(false, now);
            }
        }
    }

    /// `update_dl_entity`: the CBS wakeup rule, revised for constrained deadlines (and for
    /// a server handling starvation) unless boosted. A deferred server keeping its deadline
    /// waits again.
    fn update_dl_entity(&mut self, p: u32) {
        let now = self.now;
        let se = &mut self.ses[p as usize];
        if before(se.deadline, now) || se.overflow(now) {
            if (!se.implicit() || (se.defer && se.defer_running))
                && !before(se.deadline, now)
                && !se.boosted()
            {
                // update_dl_revised_wakeup: keep d, cut q to the density.
                se.runtime = ((se.dl_density * (se.deadline - now)) >> BW_SHIFT) as i64;
                return;
            }
            se.defer_running = false;
            se.new_period(now);
            self.note_budget(p);
        } else if se.defer && !se.defer_running {
            se.defer_armed = true;
            se.set_throttled(true, now);
        }
    }

    /// A new budget and deadline, for the trace.
    fn note_budget(&mut self, p: u32) {
        let se = &self.ses[p as usize];
        let (runtime, deadline) = (se.runtime, se.deadline);
        self.note(p, DlNote::Replenish { runtime, deadline });
    }

    /// `dl_check_constrained_dl`: woken after its deadline but before its next period, a
    /// constrained task waits for that period, unless boosted.
    fn check_constrained(&mut self, p: u32) {
        let now = self.now;
        let se = &mut self.ses[p as usize];
        if before(se.deadline, now) && before(now, se.next_period()) {
            if se.boosted() || !self.start_dl_timer(p) {
                return;
            }
            let se = &mut self.ses[p as usize];
            se.set_throttled(true, now);
            se.runtime = se.runtime.min(0);
        }
    }

    /// `task_contending`; nothing for a task boosted from another class (no bandwidth).
    fn task_contending(&mut self, p: u32, flags: u32) {
        let se = &mut self.ses[p as usize];
        if se.dl_runtime == 0 {
            return;
        }
        if flags & ENQUEUE_MIGRATED != 0 {
            self.dl.this_bw += se.dl_bw;
        }
        if se.non_contending {
            se.non_contending = false;
            se.inactive_timer.cancel();
        } else {
            self.dl.add_running(se);
        }
    }

    /// `task_non_contending`: at its 0-lag time t0 = d − q·P/Q a blocked task stops
    /// counting in running_bw; before it, it is active non-contending. `dead`: the task
    /// exits and its bandwidth leaves this rq (and, by the caller, the root domain).
    fn task_non_contending(&mut self, p: u32, dead: bool) -> bool {
        let now = self.now;
        let se = &mut self.ses[p as usize];
        if se.dl_runtime == 0 {
            return false;
        }
        let zerolag = se.deadline as i64
            - ((se.runtime as i128 * se.dl_period as i128) / se.dl_runtime as i128) as i64
            - now as i64;
        if zerolag < 0 || se.inactive_timer.armed {
            self.dl.sub_running(se);
            if dead {
                self.dl.this_bw -= se.dl_bw;
                return true;
            }
            return false;
        }
        se.non_contending = true;
        self.arm(p, DlTimer::Inactive, now + zerolag as u64);
        false
    }

    /// `inactive_task_timer`: true when a dead task's bandwidth leaves the root domain.
    pub fn inactive_timer(&mut self, p: u32, dead: bool) -> bool {
        let se = &mut self.ses[p as usize];
        se.inactive_timer.armed = false;
        if dead {
            if se.non_contending {
                self.dl.sub_running(se);
                self.dl.this_bw -= se.dl_bw;
                se.non_contending = false;
            }
            return true;
        }
        if se.non_contending {
            self.dl.sub_running(se);
            se.non_contending = false;
        }
        false
    }

    /// `enqueue_task_dl` + `enqueue_dl_entity`. A boost overrides a throttle. ENQUEUE_INITIAL
    /// is a task that has just become SCHED_DEADLINE while queued (`switched_to_dl` after
    /// ENQUEUE_RESTORE): its bandwidth joins the rq, as it does back from a PI change.
    pub fn enqueue(&mut self, p: u32, flags: u32) {
        let now = self.now;
        {
            let se = &mut self.ses[p as usize];
            if se.boosted() && se.throttled {
                se.dl_timer.cancel();
                se.set_throttled(false, now);
            }
            if !se.throttled && !se.implicit() {
                self.check_constrained(p);
            }
        }
        if flags & (ENQUEUE_INITIAL | ENQUEUE_RESTORE | ENQUEUE_MIGRATING) != 0 {
            let se = &mut self.ses[p as usize];
            self.dl.this_bw += se.dl_bw;
            self.dl.add_running(se);
        }
        let se = &mut self.ses[p as usize];
        if !se.defer && se.throttled && flags & ENQUEUE_REPLENISH == 0 {
            if flags & ENQUEUE_WAKEUP != 0 {
                self.task_contending(p, flags);
            }
            return;
        }
        if flags & ENQUEUE_WAKEUP != 0 {
            self.task_contending(p, flags);
            self.update_dl_entity(p);
        } else if flags & ENQUEUE_REPLENISH != 0 {
            self.replenish(p);
        } else if flags & (ENQUEUE_INITIAL | ENQUEUE_RESTORE) != 0
            && !se.boosted()
            && before(se.deadline, now)
        {
            se.new_period(now); // setup_new_dl_entity
            self.note_budget(p);
        }
        // A deferred server still waiting for its zero-laxity instant is not queued.
        if self.ses[p as usize].throttled && self.start_dl_timer(p) {
            return;
        }
        let se = &mut self.ses[p as usize];
        if se.throttled {
            se.dl_timer.cancel();
            se.defer_armed = false;
            se.set_throttled(false, now);
        }
        se.on_rq = true;
        let d = se.deadline;
        self.dl.insert(d, p);
    }

    /// `__dequeue_dl_entity`.
    fn unqueue(&mut self, p: u32) {
        let se = &mut self.ses[p as usize];
        if se.on_rq {
            se.on_rq = false;
            self.dl.remove(p);
        }
    }

    /// `dequeue_dl_entity`; true when a dead task's bandwidth leaves the root domain now.
    pub fn dequeue(&mut self, p: u32, flags: u32) -> bool {
        self.unqueue(p);
        if flags & (DEQUEUE_SAVE | DEQUEUE_MIGRATING) != 0 {
            let se = &mut self.ses[p as usize];
            self.dl.sub_running(se);
            self.dl.this_bw -= se.dl_bw;
        }
        if flags & DEQUEUE_SLEEP != 0 {
            let now = self.now;
            let se = &mut self.ses[p as usize];
            if se.check_miss(now) {
                let deadline = se.deadline;
                self.note(p, DlNote::Miss { deadline });
            }
            return self.task_non_contending(p, flags & DEQUEUE_SPECIAL != 0);
        }
        false
    }

    /// `update_curr_dl`: charge the running task's budget. True asks for a resched.
    pub fn update_curr(&mut self) -> bool {
        let Some(p) = self.curr else { return false };
        let se = &mut self.ses[p as usize];
        if !se.on_rq {
            return false;
        }
        let delta = self.clock_task as i64 - se.exec_start as i64;
        if delta > 0 {
            se.exec_start = self.clock_task;
        }
        self.update_curr_se(p, delta, false)
    }

    /// `update_curr_dl_se`: charge `delta` ns to entity `p` (GRUB, scaled to max capacity
    /// and frequency, or, for the server, as is) and throttle it at exhaustion. A deferred
    /// server exhausted in the background needs no help this period: it waits again; if
    /// the CPU was `idle`, only once (`dl_defer_idle`: the budget then stays at zero).
    fn update_curr_se(&mut self, p: u32, delta: i64, idle: bool) -> bool {
        let now = self.now;
        let se = &mut self.ses[p as usize];
        if delta > 0 {
            let delta = delta as u64;
            let scaled = if p == self.server {
                delta
            } else if se.reclaim {
                let s = grub::grub_reclaim(self.dl.grub, delta, self.dl, se.dl_bw);
                se.stats.reclaimed_ns += delta.saturating_sub(s);
                s
            } else {
                cap_scale(cap_scale(delta, self.scale.freq), self.scale.cpu)
            };
            se.runtime -= scaled as i64;
            if se.check_miss(now) {
                let deadline = se.deadline;
                self.note(p, DlNote::Miss { deadline });
            }
            let se = &mut self.ses[p as usize];
            se.defer_idle &= idle;
            if se.defer && se.throttled && se.runtime <= 0 {
                if se.defer_idle {
                    se.runtime = 0;
                    return false;
                }
                se.defer_running = false;
                se.dl_timer.cancel();
                se.new_period(now);
                se.defer_idle = idle;
                self.start_dl_timer(p);
                return false;
            }
        } else if !se.yielded {
            return false;
        }
        let se = &mut self.ses[p as usize];
        if se.runtime > 0 && !se.yielded {
            return false;
        }
        if !se.yielded {
            se.stats.exhaustions += 1;
        }
        se.set_throttled(true, now);
        let runtime = se.runtime;
        self.note(p, DlNote::Throttle { runtime });
        self.unqueue(p);
        if self.ses[p as usize].boosted() || !self.start_dl_timer(p) {
            self.enqueue(p, ENQUEUE_REPLENISH);
        }
        self.dl.first() != Some(p)
    }

    /// `dl_task_timer`: a throttled task's next period has come. A queued task is
    /// replenished and enqueued (true: the caller checks preemption); one that blocked while
    /// throttled is only replenished, its wakeup enqueues it. A boosted task is left alone.
    pub fn dl_timer(&mut self, p: u32, queued: bool) -> bool {
        let se = &mut self.ses[p as usize];
        se.dl_timer.armed = false;
        if se.boosted() || !se.throttled {
            return false;
        }
        if !queued {
            self.replenish(p);
            return false;
        }
        self.enqueue(p, ENQUEUE_REPLENISH);
        true
    }

    /// `yield_task_dl`: the budget is dropped until the next period.
    pub fn yield_task(&mut self) {
        if let Some(p) = self.curr {
            self.ses[p as usize].yielded = true;
        }
        self.update_curr();
    }

    /// `migrate_task_rq_dl`: a waking task leaves this rq.
    pub fn migrate_task_rq(&mut self, p: u32) {
        let se = &mut self.ses[p as usize];
        if se.non_contending {
            self.dl.sub_running(se);
            se.non_contending = false;
            se.inactive_timer.cancel();
        }
        self.dl.this_bw -= se.dl_bw;
    }
}

#[cfg(test)]
mod tests;
