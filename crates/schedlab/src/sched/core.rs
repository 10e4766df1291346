//! kernel/sched/core.c: the entry points the machine calls (wake-ups, sleeps, schedule(),
//! the tick, attribute changes, timers) and the class plumbing under them.

use super::class::{self, Class, Dequeued, Env, Placement, SchedClass, Wake};
use super::clock_pelt::Invariance;
use super::deadline::SchedDlEntity;
use super::deadline::BW_UNIT;
use super::explain::Kind;
use super::fair::balance::stats::CpuIdleType;
use super::fair::balance::{update_rq_avg_idle, AvgIdle};
use super::fair::bandwidth::ThrottleNode;
use super::fair::cfs_tasks::GroupNode;
use super::fair::group::{TgId, ROOT_TG};
use super::fair::sched_class::{attach_task_cfs_rq, detach_task_migrated, put_prev_set_next_fair};
use super::fair::wakeup::Wakee;
use super::fair::{SchedEntity, SeId};
use super::features::Feat;
use super::flags::*;
use super::hooks::{Hooks, RqHooks, SchedTimer, Switch};
use super::idle;
use super::ops::Op;
use super::pelt::cap_scale;
use super::preempt::Preempt;
use super::rq::{Rq, RqAvg};
use super::rt::SchedRtEntity;
use super::task::{cpumask_weight, SchedStats, SchedTask, TaskState};
use super::uapi::{Policy, SchedAttr};
use super::uclamp::{task_uclamp, RqInc, UCLAMP_MAX, UCLAMP_MIN};
use super::weight::LoadWeight;
use super::Sched;
use crate::cpufreq::Hook;
use crate::time::Ns;
use crate::tracepoint::{Counter, Note, PrevState, Tracepoint};

/// Where a `try_to_wake_up` stands after `Sched::ttwu_select`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttwu {
    /// The task was not asleep: nothing done.
    NotAsleep,
    /// Requeued where it still was queued (`ttwu_runnable`): done.
    Done,
    /// TASK_WAKING on its CPU: `Sched::ttwu_activate` enqueues it with these enqueue flags
    /// and wake flags, and whether it goes on its CPU's wake list (`ttwu_queue_cond`).
    Waking {
        flags: u32,
        wake_flags: u32,
        queued: bool,
    },
}

impl Sched {
    /// `update_rq_clock`.
    #[inline]
    pub(crate) fn update_rq_clock(&mut self, cpu: usize, now: u64) {
        let rq = &mut self.rqs[cpu];
        let busy = rq.curr.is_some();
        if busy && rq.clock.invariance == Invariance::ClockPelt && now != rq.clock.clock_task {
            self.ops.add(cpu, Op::ClockPelt, 1); // update_rq_clock_pelt scales the delta
        }
        rq.clock.update(now, !busy);
    }

    /// Run a class operation on `cpu`'s runqueue (tracepoints and timers go straight to the
    /// machine); then, if it changed the root cfs_rq's signals, tell cpufreq. An operation
    /// that gives the CPU its second task marks the root domain overloaded, as
    /// `add_nr_running` does.
    #[inline]
    pub(super) fn on_rq<H: Hooks, R>(
        &mut self,
        cpu: usize,
        h: &mut H,
        op: impl FnOnce(&mut Rq, &mut Env) -> R,
    ) -> R {
        // Only while the flag is clear does a second task need noticing.
        let nr_before = (!self.overloaded.get()).then(|| self.nr_running(cpu));
        let mut env = Env {
            cfs_rqs: &mut self.cfs_rqs,
            spare_cfs: &mut self.spare_cfs,
            ops: &mut self.ops,
            tgs: &mut self.tgs,
            ses: &mut self.ses,
            group_nodes: &mut self.group_nodes,
            h_loads: &mut self.h_loads,
            throttle_nodes: &mut self.throttle_nodes,
            dl: &mut self.dls,
            rt: &mut self.rts,
            feat: &self.feat,
            tun: &self.tun,
            asym: self.asym,
            uclamp_used: self.uclamp_used,
            rd_overutilized: (!self.pd.is_empty()).then_some(&self.overutilized),
            hooks: RqHooks::new(h, &self.tasks, cpu, self.rqs[cpu].curr),
        };
        let r = op(&mut self.rqs[cpu], &mut env);
        if nr_before.is_some_and(|n| n < 2) && self.nr_running(cpu) >= 2 {
            self.overloaded.set(true);
        }
        self.util_change(cpu, h);
        if h.tracing() {
            let rq = &self.rqs[cpu];
            let bw = |b: u64| b as f64 / BW_UNIT as f64;
            h.counter(cpu, Counter::DlRunningBw, bw(rq.dl.running_bw));
            h.counter(cpu, Counter::DlThisBw, bw(rq.dl.this_bw));
            if self.uclamp_used {
                h.counter(cpu, Counter::UclampMin, rq.uclamp.get(UCLAMP_MIN) as f64);
                h.counter(cpu, Counter::UclampMax, rq.uclamp.get(UCLAMP_MAX) as f64);
            }
        }
        r
    }

    /// `p->sched_class`.
    #[inline]
    pub(super) fn class(&self, p: u32) -> Class {
        self.tasks[p as usize].class
    }

    /// `cpufreq_update_util` after a class operation that changed the root cfs_rq's PELT
    /// signals (`cfs_rq_util_change`).
    fn util_change<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        if std::mem::take(&mut self.cfs_rqs[cpu].util_changed) {
            h.cpufreq_update_util(self, cpu, Hook::UtilChange);
        }
    }

    /// `sched_cpu_capacity`: the capacity left to fair tasks, the original, and the current
    /// one (at the present frequency).
    fn trace_cpu_capacity<H: Hooks>(&self, cpu: usize, h: &mut H) {
        let rq = &self.rqs[cpu];
        h.trace(
            &self.tasks,
            Tracepoint::CpuCapacity {
                cpu,
                capacity: rq.cpu_capacity,
                orig: rq.capacity,
                curr: cap_scale(rq.capacity, rq.clock.scale.freq),
            },
        );
    }

    /// Boot: each CPU's capacity in the trace, then its root cfs_rq's signals, so that a
    /// CPU that stays idle has them too (the LISA module's probe would record it at its
    /// first blocked-load update).
    pub fn sched_init_smp<H: Hooks>(&mut self, h: &mut H) {
        if !h.tracing() {
            return;
        }
        for cpu in 0..self.rqs.len() {
            self.trace_cpu_capacity(cpu, h);
        }
        for cpu in 0..self.rqs.len() {
            let a = &self.cfs_rqs[cpu].avg;
            let note = Note::PeltCfs {
                path: ROOT_TG,
                load: a.load_avg,
                runnable: a.runnable_avg,
                util: a.util_avg,
                update_time: a.last_update_time,
            };
            let tp = Tracepoint::Fair {
                cpu,
                task: None,
                note,
            };
            h.trace(&self.tasks, tp);
        }
    }

    /// The bandwidth timers that run from the start: RT throttling's period once RT
    /// threads live, and each cpu.max group's period.
    pub fn start_bandwidth<H: Hooks>(&mut self, h: &mut H) {
        self.start_rt_bandwidth(h);
        self.start_cfs_bandwidth(h);
    }

    /// A sleep's timer slack (`hrtimer_nanosleep`): the task's `timer_slack_ns`, none for
    /// an RT or deadline task.
    pub fn timer_slack_ns(&self, id: u32) -> Ns {
        if self.tasks[id as usize].class.rt_task() {
            0
        } else {
            self.feat.timer_slack_ns
        }
    }

    /// `sched_balance_trigger` from a busy CPU's tick: the periodic balance
    /// (`sched_balance_softirq`: the blocked load's decay, then `sched_balance_domains`)
    /// when a domain is due, then the NOHZ idle balance kick.
    fn sched_balance_trigger<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        if h.now() >= self.rqs[cpu].next_balance {
            self.sched_balance_update_blocked_averages(cpu, h);
            let idle = if self.idle_cpu(cpu) {
                CpuIdleType::Idle
            } else {
                CpuIdleType::NotIdle
            };
            self.rqs[cpu].next_balance = self.sched_balance_domains(cpu, idle, h);
        }
        self.nohz_balancer_kick(cpu, h);
    }

    /// `update_cpu_capacity`: the capacity RT and deadline tasks leave to fair ones.
    pub(crate) fn update_cpu_capacity<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        let rq = &mut self.rqs[cpu];
        rq.cpu_capacity = super::fair::capacity::scale_rt_capacity(rq);
        if h.tracing() {
            self.trace_cpu_capacity(cpu, h);
        }
    }

    /// `sched_fork` with `sched_setattr`'s attributes: thread `pid` named `comm` and its
    /// entities, allowed on `cpus_mask` (None: every CPU). Returns its id.
    fn sched_fork(
        &mut self,
        pid: u32,
        comm: String,
        attr: &SchedAttr,
        cpus_mask: Option<Vec<bool>>,
        now: u64,
    ) -> u32 {
        let id = self.tasks.len() as u32;
        let policy = attr.policy;
        let mut se = SchedEntity::new(
            id,
            LoadWeight::of_nice(attr.nice, policy == Policy::Idle),
            self.feat.util_est.initial(),
        );
        se.idle = policy == Policy::Idle;
        self.sched_idle_used |= se.idle;
        se.normal = policy == Policy::Other;
        if let Some(slice) = attr.slice {
            se.slice = slice.clamp(100_000, 100_000_000); // __setscheduler_params
            se.custom_slice = true;
        }
        let class = Class::of(policy);
        let cpus_mask = cpus_mask.unwrap_or_else(|| vec![true; self.rqs.len()]);
        // Any task may enter the deadline class (a PI boost) or the RT one.
        let nr_cpus_allowed = cpumask_weight(&cpus_mask);
        let migratable = nr_cpus_allowed > 1;
        let task = SchedTask {
            pid,
            comm,
            state: TaskState::New,
            state_since: now,
            cpu: 0,
            policy,
            class,
            pi_prio: None,
            nice: attr.nice,
            rt_priority: attr.rt_priority,
            uclamp: task_uclamp(attr.util_min, attr.util_max, class.rt_task()),
            max_allowed_capacity: self.max_allowed_capacity(&cpus_mask),
            cpus_mask,
            nr_cpus_allowed,
            se: self.ses.len() as SeId,
            tg: attr.group,
            dl: self.dls.len() as u32,
            woken_at: None,
            pi_blocked_on: None,
            wakee: Wakee::default(),
            recent_used_cpu: 0,
            sched_info: Default::default(),
            stats: SchedStats {
                created_at: now,
                ..Default::default()
            },
        };
        let mut dl = attr.dl.map_or_else(SchedDlEntity::default, |d| {
            SchedDlEntity::new(d.runtime, d.deadline, d.period, d.reclaim)
        });
        dl.task = Some(id);
        dl.migratable = migratable;
        let mut rt = SchedRtEntity::new(attr.rt_priority, policy == Policy::Rr);
        rt.migratable = migratable;
        rt.uclamp_cap = task.uclamp_cap();
        self.tasks.push(task);
        self.h_loads.push(se.load);
        self.ses.push(se);
        self.group_nodes.push(GroupNode::default());
        self.throttle_nodes.push(ThrottleNode::default());
        self.dls.push(dl);
        self.rts.push(rt);
        id
    }

    /// A kernel thread of the machine's own (`sim/kthread.rs`), asleep on `cpu` since boot:
    /// forked but never enqueued, its PELT signals decayed to nothing, so that its first
    /// wakeup attaches none (where `wake_up_new_task` would give it a share of the spare
    /// capacity, as to a new task). Its id.
    pub fn kthread_asleep(
        &mut self,
        (pid, comm): (u32, String),
        attr: &SchedAttr,
        cpus_mask: Option<Vec<bool>>,
        cpu: usize,
        now: Ns,
    ) -> u32 {
        let id = self.sched_fork(pid, comm, attr, cpus_mask, now);
        self.set_task_rq(id, cpu);
        self.tasks[id as usize].recent_used_cpu = cpu;
        self.set_state(id, TaskState::Sleeping, now);
        id
    }

    /// `sched_fork` + `wake_up_new_task`: a new thread (`parent`'s child, or one of the
    /// workload's at start), admitted if SCHED_DEADLINE (`sched_setattr`), placed and
    /// enqueued. Its id is the number of tasks before it; false when admission control
    /// refused it.
    pub fn wake_up_new_task<H: Hooks>(
        &mut self,
        pid: u32,
        comm: String,
        attr: &SchedAttr,
        cpus_mask: Option<Vec<bool>>,
        parent: Option<u32>,
        h: &mut H,
    ) -> bool {
        let id = self.sched_fork(pid, comm, attr, cpus_mask, h.now());
        if self.tasks[id as usize].policy == Policy::Deadline && !self.dl_admit(id) {
            self.refuse(id, h.now());
            return false;
        }
        if self.tasks[id as usize].class.is_rt() {
            self.start_rt_bandwidth(h); // inc_rt_group: the period timer, if not running
        }
        let parent_cpu = parent.map_or(0, |p| self.tasks[p as usize].cpu);
        let fork = Wake {
            cpu: parent_cpu,
            flags: WF_FORK,
            now: h.now(),
        };
        let (cpu, how) = self.select_task_rq(id, parent_cpu, fork);
        self.decide(
            Kind::SelectTaskRq,
            (h.now(), parent_cpu),
            Some(id),
            cpu as i64,
            how.name(),
        );
        self.set_task_rq(id, cpu);
        self.tasks[id as usize].recent_used_cpu = cpu;
        // The parent's CPU records the fork and the wakeup (rt-app's main thread, when not
        // modelled, the child's).
        let here = if parent.is_some() { parent_cpu } else { cpu };
        if h.tracing() {
            let fork = Tracepoint::Fork {
                parent,
                child: id,
                cpu: here,
            };
            h.trace(&self.tasks, fork);
            h.trace(&self.tasks, Tracepoint::Rename { task: id, cpu });
        }
        self.update_rq_clock(cpu, h.now());
        let class = self.class(id);
        self.on_rq(cpu, h, |rq, env| class.task_fork(rq, env, id));
        let tp = Tracepoint::WakeupNew {
            task: id,
            target: cpu,
            how,
            cpu: here,
            parent,
        };
        self.ttwu_do_activate(id, (cpu, here), (ENQUEUE_INITIAL, WF_FORK), h, |s, h| {
            h.trace(&s.tasks, tp)
        });
        true
    }

    /// `ttwu_do_activate` by CPU `by`: enqueue `id` on `cpu` with `flags` (enqueue, wake),
    /// fire the wakeup's tracepoints (`trace`, when tracing), check preemption, then
    /// `task_woken`.
    fn ttwu_do_activate<H: Hooks>(
        &mut self,
        id: u32,
        (cpu, by): (usize, usize),
        (enqueue_flags, wake_flags): (u32, u32),
        h: &mut H,
        trace: impl FnOnce(&Sched, &mut H),
    ) {
        self.this_cpu = Some(by);
        let hrtick = self.rqs[cpu].hrtick;
        self.activate(id, cpu, enqueue_flags, h);
        if h.tracing() {
            trace(self, h);
        }
        self.wakeup_preempt(cpu, id, wake_flags, h);
        self.this_cpu = None;
        // The CPU's own wakeup returns to user space; another's arming its hrtick
        // interrupts it (`hrtick_start`'s IPI), after the waker let its runqueue go.
        if by == cpu || self.rqs[cpu].hrtick != hrtick {
            self.irq_exit(cpu, h);
        }
        self.task_woken(cpu, id, h);
        // How long the CPU stayed idle after a newly idle balance (≤6.19's place; a fork's
        // activation, wake_up_new_task's own, neither samples nor clears it).
        if self.feat.avg_idle == AvgIdle::Wakeup && wake_flags & WF_FORK == 0 {
            update_rq_avg_idle(&mut self.rqs[cpu], self.feat.newidle_gate);
        }
    }

    /// `task_woken` (and `switched_to_dl`/`switched_to_rt` for a new thread).
    #[inline]
    fn task_woken<H: Hooks>(&mut self, cpu: usize, id: u32, h: &mut H) {
        let class = self.tasks[id as usize].class;
        class.task_woken(self, cpu, id, h);
    }

    /// `select_task_rq`: the task's class chooses, unless the task may run on one CPU only
    /// (then its class is not asked: no wakee flip, no affine wakeup counted, and the CPU
    /// counts as `prev`, or as `fallback` when it is not the previous one); a CPU the task
    /// may not run on gives way to the first one it may (`select_fallback_rq`). The choice is
    /// counted by its rule.
    fn select_task_rq(&mut self, id: u32, prev: usize, wake: Wake) -> (usize, Placement) {
        let t = &self.tasks[id as usize];
        let (mut cpu, mut how) = if t.nr_cpus_allowed > 1 {
            self.class(id).select_task_rq(self, id, prev, wake)
        } else {
            let only = t.cpus_mask.iter().position(|&a| a).unwrap_or(prev);
            let how = if only == prev {
                Placement::Prev
            } else {
                Placement::Fallback
            };
            (only, how)
        };
        let t = &mut self.tasks[id as usize];
        if !t.cpus_mask[cpu] {
            cpu = (t.cpus_mask.iter().position(|&a| a)).expect("an allowed CPU exists");
            how = Placement::Fallback;
        }
        t.stats.placements[how as usize] += 1;
        (cpu, how)
    }

    /// `enqueue_task` of `id` on `cpu` by the class's `enqueue` (its wakeup requeues it if
    /// delayed): `uclamp_rq_inc` before it (6.16+) or after it, which a delayed task is not
    /// counted in.
    pub(super) fn enqueue_task<H: Hooks>(
        &mut self,
        (id, cpu): (u32, usize),
        wakeup: bool,
        h: &mut H,
        enqueue: impl FnOnce(&mut Rq, &mut Env),
    ) {
        let first = self.feat.uclamp_rq_inc == RqInc::BeforeEnqueue;
        if first {
            self.uclamp_inc(id, cpu, wakeup);
        }
        self.on_rq(cpu, h, enqueue);
        if !first {
            self.uclamp_inc(id, cpu, false);
        }
    }

    /// `uclamp_rq_inc` for `id` entering `cpu`'s runqueue: not a delayed task, unless its
    /// wakeup is requeueing it (ENQUEUE_DELAYED).
    fn uclamp_inc(&mut self, id: u32, cpu: usize, delayed_ok: bool) {
        let delayed = self.ses[self.tasks[id as usize].se as usize].sched_delayed;
        if self.uclamp_used && (!delayed || delayed_ok) {
            self.rqs[cpu]
                .uclamp
                .inc(&mut self.tasks[id as usize].uclamp);
        }
    }

    /// `uclamp_rq_dec`, before the class dequeue.
    pub(super) fn uclamp_dec(&mut self, id: u32, cpu: usize) {
        if self.uclamp_used {
            self.rqs[cpu]
                .uclamp
                .dec(&mut self.tasks[id as usize].uclamp);
        }
    }

    /// `set_user_nice` for thread `id` (rt-app's `setpriority`): an RT or deadline task keeps
    /// the nice for later; another leaves its queue (DEQUEUE_SAVE; running, it is put back),
    /// takes the new weight (`set_load_weight`: `reweight_task_fair`, else the entity's own),
    /// comes back (ENQUEUE_RESTORE; running, `set_next_task`, so its slice starts anew) and
    /// its priority's change is checked (`prio_changed`); true when its CPU is to reschedule.
    pub fn set_user_nice<H: Hooks>(&mut self, id: u32, nice: i32, h: &mut H) -> bool {
        let t = &mut self.tasks[id as usize];
        if t.nice == nice {
            return false;
        }
        let cpu = t.cpu;
        if !t.policy.is_fair() {
            t.nice = nice;
            return false;
        }
        self.change_class((id, DEQUEUE_SAVE), h, |s, h| {
            let t = &mut s.tasks[id as usize];
            t.nice = nice;
            let (lw, se) = (LoadWeight::of_nice(nice, t.policy == Policy::Idle), t.se);
            match s.class(id) {
                Class::Fair => {
                    s.on_rq(cpu, h, |rq, env| Class::Fair.reweight_task(rq, env, id, lw))
                }
                _ => s.ses[se as usize].load = lw, // PI-boosted: no class reweight
            }
            ENQUEUE_RESTORE
        });
        self.need_resched(cpu)
    }

    /// `prio_changed_fair`: unless task `id` is not queued or its CPU's root cfs_rq holds
    /// nothing else (its entities; under 7.x's flat runqueue its tasks, `h_nr_queued`), the
    /// running task whose priority `fell` reschedules (rt-app's nice'd thread at its start),
    /// a waiting one is checked as a wakeup would be.
    pub(crate) fn prio_changed_fair<H: Hooks>(&mut self, id: u32, fell: bool, h: &mut H) {
        let cpu = self.tasks[id as usize].cpu;
        let root = &self.cfs_rqs[cpu];
        let queued = if self.feat.flat() {
            root.h_nr_queued
        } else {
            root.nr_running
        };
        if !self.tasks[id as usize].queued() || queued == 1 {
            return;
        }
        if self.rqs[cpu].curr != Some(id) {
            self.wakeup_preempt(cpu, id, 0, h);
        } else if fell {
            self.resched_curr(cpu, h);
        }
    }

    /// `__sched_setscheduler` by thread `id` of itself to SCHED_FIFO or SCHED_RR (`attr`'s
    /// policy and priority; rt-app's thread set-up): its class changes as a PI boost's does,
    /// its util_min not given defaults to RT's, and the RT period timer starts if it is not
    /// running (`inc_rt_group`); its fair load leaves its cfs_rq (`switched_from_fair`).
    pub fn sched_setscheduler_rt<H: Hooks>(&mut self, id: u32, attr: &SchedAttr, h: &mut H) {
        self.change_class((id, DEQUEUE_SAVE | DEQUEUE_MOVE), h, |s, _| {
            let t = &mut s.tasks[id as usize];
            t.policy = attr.policy;
            t.rt_priority = attr.rt_priority;
            t.class = Class::of_prio(t.policy, t.prio());
            t.uclamp = task_uclamp(attr.util_min, attr.util_max, true);
            let cap = t.uclamp_cap();
            let rt = &mut s.rts[id as usize];
            *rt = SchedRtEntity {
                uclamp_cap: cap,
                migratable: rt.migratable,
                ..SchedRtEntity::new(attr.rt_priority, attr.policy == Policy::Rr)
            };
            ENQUEUE_RESTORE
        });
        self.start_rt_bandwidth(h);
    }

    /// `sched_move_task` (the cpu controller's `attach`): thread `id` joins task group `tg`.
    /// A fair one leaves its cfs_rq (DEQUEUE_SAVE), its load detached, and joins the group's
    /// cfs_rq on the same CPU, its load attached (`task_change_group_fair`); if it was
    /// running its CPU picks again. Any other only changes the group its entity would join.
    pub fn sched_move_task<H: Hooks>(&mut self, id: u32, tg: TgId, h: &mut H) {
        let t = &self.tasks[id as usize];
        if t.tg == tg {
            return;
        }
        let (cpu, class) = (t.cpu, self.class(id));
        if class != Class::Fair {
            self.tasks[id as usize].tg = tg;
            self.set_task_rq(id, cpu);
            return;
        }
        let running = self.rqs[cpu].curr == Some(id);
        let queued = self.ses[t.se as usize].on_rq;
        self.update_rq_clock(cpu, h.now());
        self.on_rq(cpu, h, |rq, env| {
            if queued {
                class.dequeue_task(rq, env, id, DEQUEUE_SAVE | DEQUEUE_MOVE);
            }
            if running {
                class.put_prev_task(rq, env, id);
            }
            detach_task_migrated(rq, env, id);
        });
        self.tasks[id as usize].tg = tg;
        self.set_task_rq(id, cpu);
        self.on_rq(cpu, h, |rq, env| {
            attach_task_cfs_rq(rq, env, id);
            if queued {
                class.enqueue_task(rq, env, id, ENQUEUE_RESTORE);
            }
            if running {
                class.set_next_task(rq, env, id);
            }
        });
        if running {
            self.resched_curr(cpu, h);
        }
    }

    /// `sched_setattr` with SCHED_FLAG_UTIL_CLAMP for thread `id` (None: unchanged), then
    /// `uclamp_update_active`: a RUNNABLE task's clamps move to their new buckets at once.
    pub fn sched_setattr_uclamp(&mut self, id: u32, min: Option<u32>, max: Option<u32>) {
        let t = &mut self.tasks[id as usize];
        let rq = &mut self.rqs[t.cpu].uclamp;
        let active = t.uclamp[UCLAMP_MIN].is_active();
        if active {
            rq.dec(&mut t.uclamp);
        }
        for (clamp_id, v) in [(UCLAMP_MIN, min), (UCLAMP_MAX, max)] {
            if let Some(v) = v {
                t.uclamp[clamp_id].value = v;
            }
        }
        if active {
            rq.inc(&mut t.uclamp);
        }
        self.rts[id as usize].uclamp_cap = t.uclamp_cap();
    }

    /// `__set_cpus_allowed_ptr_locked`: a new mask draws a destination from it
    /// (`cpumask_any_and_distribute`, by the CPU making the call), used only if the task's
    /// CPU left the mask (`affine_move_task`): a queued task moves at once, a running one
    /// through the stopper (`migration_cpu_stop`: preempted, then `move_queued_task`). A
    /// sleeping one is placed by its next wakeup. Simplified: the stopper takes no time and
    /// does not appear in the trace.
    pub fn set_cpus_allowed<H: Hooks>(&mut self, id: u32, mask: Vec<bool>, h: &mut H) {
        let t = &self.tasks[id as usize];
        if t.cpus_mask == mask {
            return;
        }
        let (cpu, queued) = (t.cpu, t.queued());
        let dest = self.cpumask_any_and_distribute(cpu, &mask);
        let stays = mask[cpu];
        let max_allowed_capacity = self.max_allowed_capacity(&mask);
        let t = &mut self.tasks[id as usize];
        t.max_allowed_capacity = max_allowed_capacity;
        t.nr_cpus_allowed = cpumask_weight(&mask);
        t.cpus_mask = mask;
        // The RT and deadline classes read it as their entities' `migratable`.
        let migratable = t.nr_cpus_allowed > 1;
        self.rts[id as usize].migratable = migratable;
        self.dl_of_mut(id).migratable = migratable;
        if stays || !queued {
            return;
        }
        self.move_task(id, cpu, dest, h);
    }

    /// Move queued task `id` from `from` to `to` as the stopper does (`migration_cpu_stop`,
    /// `active_load_balance_cpu_stop`): a running one leaves the CPU, which picks its next
    /// task, and `to` may preempt for it. Simplified: the stopper itself takes no time.
    pub(crate) fn move_task<H: Hooks>(&mut self, id: u32, from: usize, to: usize, h: &mut H) {
        self.update_rq_clock(from, h.now());
        self.detach_task(id, from, h);
        if self.rqs[from].curr == Some(id) {
            self.schedule(from, h);
        }
        self.attach_task(id, (from, to), from, h);
        self.wakeup_preempt(to, id, 0, h);
    }

    /// `set_task_max_allowed_capacity`: the biggest CPU capacity in `mask`.
    fn max_allowed_capacity(&self, mask: &[bool]) -> u64 {
        (self.rqs.iter().zip(mask))
            .filter(|(_, &allowed)| allowed)
            .map(|(rq, _)| rq.capacity)
            .max()
            .unwrap_or(0)
    }

    /// `cpumask_any_and_distribute` called on `this_cpu`: the allowed CPU after the one it
    /// returned last (`distribute_cpu_mask_prev`, 0 at boot), wrapping around.
    fn cpumask_any_and_distribute(&mut self, this_cpu: usize, mask: &[bool]) -> usize {
        let n = mask.len();
        let prev = self.distribute_prev[this_cpu];
        let next = (1..=n)
            .map(|i| (prev + i) % n)
            .find(|&c| mask[c])
            .expect("an affinity mask has a CPU");
        self.distribute_prev[this_cpu] = next;
        next
    }

    /// `activate_task`: enqueue, and mark runnable.
    fn activate<H: Hooks>(&mut self, id: u32, cpu: usize, flags: u32, h: &mut H) {
        self.tasks[id as usize].sched_info.enqueue(h.now());
        let class = self.class(id);
        let wakeup = flags & ENQUEUE_WAKEUP != 0;
        self.enqueue_task((id, cpu), wakeup, h, |rq, env| {
            class.enqueue_task(rq, env, id, flags)
        });
        self.set_state(id, TaskState::Runnable, h.now());
        if flags & ENQUEUE_WAKEUP != 0 {
            h.cpufreq_update_util(self, cpu, Hook::Wakeup);
        }
    }

    /// `ttwu_queue_cond`: with TTWU_QUEUE, a wakeup to a CPU of another LLC, or to an idle
    /// one, goes on the target's wake list, and the target does it after its IPI; otherwise
    /// the waker takes the target's lock and enqueues the task itself.
    pub(super) fn ttwu_queue_cond(&self, waker_cpu: usize, cpu: usize) -> bool {
        self.feat.has(Feat::TtwuQueue)
            && (!self.topo.share_cache(waker_cpu, cpu)
                || (cpu != waker_cpu && self.nr_running(cpu) == 0))
    }

    /// `ttwu_stat`: a wakeup counted on the waking CPU's runqueue, local or, for a task
    /// going to another CPU, on the waker's lowest domain spanning both. The work is counted
    /// where it is done: a remote wakeup on the target if `queued` on its wake list (the
    /// IPI, then its enqueue), else on the waker. Simplified: both cost `wakeup_remote`.
    fn ttwu_stat(&mut self, waker_cpu: usize, cpu: usize, queued: bool) {
        if cpu == waker_cpu {
            self.ops.add(cpu, Op::WakeupLocal, 1);
        } else {
            self.ops
                .add(if queued { cpu } else { waker_cpu }, Op::WakeupRemote, 1);
        }
        let rq = &mut self.rqs[waker_cpu].stats;
        rq.ttwu_count += 1;
        if cpu == waker_cpu {
            rq.ttwu_local += 1;
        } else if let Some(sd) =
            (self.topo.domains[waker_cpu].iter_mut()).find(|sd| sd.span.contains(&cpu))
        {
            sd.stats.ttwu_wake_remote += 1;
        }
    }

    /// `try_to_wake_up` of a sleeping or blocked thread from `waker_cpu` (by the task
    /// running there, or in interrupt context when it is idle), with `wake_flags` (WF_SYNC,
    /// WF_CURRENT_CPU; WF_TTWU is implied), its enqueue at once. False when it was not asleep.
    pub fn try_to_wake_up<H: Hooks>(
        &mut self,
        id: u32,
        waker_cpu: usize,
        wake_flags: u32,
        h: &mut H,
    ) -> bool {
        match self.ttwu_select(id, waker_cpu, wake_flags, h) {
            Ttwu::NotAsleep => false,
            Ttwu::Done => true,
            Ttwu::Waking {
                flags,
                wake_flags,
                queued,
            } => {
                self.ttwu_activate(id, (flags, wake_flags), (waker_cpu, queued), h);
                true
            }
        }
    }

    /// `try_to_wake_up` up to its enqueue: the task's CPU chosen (`select_task_rq`) and set
    /// (`set_task_cpu`), the task TASK_WAKING until `ttwu_activate`. A task still queued
    /// (delayed dequeue) is requeued where it is at once (`ttwu_runnable`).
    pub fn ttwu_select<H: Hooks>(
        &mut self,
        id: u32,
        waker_cpu: usize,
        wake_flags: u32,
        h: &mut H,
    ) -> Ttwu {
        let now = h.now();
        let t = &mut self.tasks[id as usize];
        if !matches!(t.state, TaskState::Sleeping | TaskState::Blocked) {
            return Ttwu::NotAsleep;
        }
        t.woken_at = Some(now);
        let prev = t.cpu;
        if self.ses[t.se as usize].on_rq {
            // ttwu_runnable: the waker does it, under the task's runqueue lock.
            self.ttwu_stat(waker_cpu, prev, false);
            // ttwu_runnable: still queued (delayed dequeue); requeue where it is.
            self.tasks[id as usize].stats.placements[Placement::Prev as usize] += 1;
            self.update_rq_clock(prev, now);
            self.decide(
                Kind::SelectTaskRq,
                (now, waker_cpu),
                Some(id),
                prev as i64,
                "ttwu_runnable",
            );
            let flags = (ENQUEUE_WAKEUP, wake_flags | WF_TTWU);
            self.ttwu_do_activate(id, (prev, waker_cpu), flags, h, |s, h| {
                let waking = Tracepoint::Waking {
                    task: id,
                    cpu: waker_cpu,
                    curr: s.rqs[waker_cpu].curr,
                    target: prev,
                    how: Placement::Prev,
                    irq: h.in_interrupt(),
                };
                h.trace(&s.tasks, waking);
                s.trace_wakeup(id, prev, waker_cpu, h);
            });
            return Ttwu::Done;
        }
        let wake = Wake {
            cpu: waker_cpu,
            flags: wake_flags | WF_TTWU,
            now,
        };
        let (cpu, how) = self.select_task_rq(id, prev, wake);
        self.decide(
            Kind::SelectTaskRq,
            (now, waker_cpu),
            Some(id),
            cpu as i64,
            how.name(),
        );
        let queued = self.ttwu_queue_cond(waker_cpu, cpu);
        if h.tracing() {
            let waking = Tracepoint::Waking {
                task: id,
                cpu: waker_cpu,
                curr: self.rqs[waker_cpu].curr,
                target: prev,
                how,
                irq: h.in_interrupt(),
            };
            h.trace(&self.tasks, waking);
        }
        let mut flags = ENQUEUE_WAKEUP;
        if cpu != prev {
            self.update_rq_clock(prev, now);
            let class = self.class(id);
            self.on_rq(prev, h, |rq, env| class.migrate_task_rq(rq, env, id, false));
            self.set_task_cpu(id, (prev, cpu), waker_cpu, h);
            flags |= ENQUEUE_MIGRATED;
        }
        self.set_state(id, TaskState::Waking, now);
        Ttwu::Waking {
            flags,
            wake_flags,
            queued,
        }
    }

    /// The rest of `try_to_wake_up` of TASK_WAKING `id` (`ttwu_select`) from `waker_cpu`,
    /// `queued` on its CPU's wake list or not: its enqueue there with `flags`
    /// (`ttwu_do_activate`), then `ttwu_stat`. The wakeup's preemption check sees its
    /// `wake_flags` (WF_SYNC) unless it was queued: `sched_ttwu_pending` passes none.
    pub fn ttwu_activate<H: Hooks>(
        &mut self,
        id: u32,
        (flags, wake_flags): (u32, u32),
        (waker_cpu, queued): (usize, bool),
        h: &mut H,
    ) {
        let cpu = self.tasks[id as usize].cpu;
        self.update_rq_clock(cpu, h.now());
        // Queued on its wake list, the target enqueues it (in its IPI); else the waker.
        let (by, wake_flags) = if queued {
            (cpu, WF_TTWU)
        } else {
            (waker_cpu, wake_flags | WF_TTWU)
        };
        self.ttwu_do_activate(id, (cpu, by), (flags, wake_flags), h, |s, h| {
            s.trace_wakeup(id, cpu, by, h)
        });
        self.ttwu_stat(waker_cpu, cpu, queued);
    }

    /// `sched_wakeup` of `id` onto `target`, fired on CPU `by`, which queues it (its current
    /// task the context).
    fn trace_wakeup<H: Hooks>(&self, id: u32, target: usize, by: usize, h: &mut H) {
        let wakeup = Tracepoint::Wakeup {
            task: id,
            target,
            cpu: by,
            curr: self.rqs[by].curr,
        };
        h.trace(&self.tasks, wakeup);
    }

    /// `set_task_cpu`: the task is now on `to`; `sched_migrate_task`, fired on CPU `by`,
    /// which moves it.
    fn set_task_cpu<H: Hooks>(
        &mut self,
        id: u32,
        (from, to): (usize, usize),
        by: usize,
        h: &mut H,
    ) {
        self.set_task_rq(id, to);
        let far = self.topo.distance(from, to) as usize;
        self.tasks[id as usize].stats.migrations_by[far] += 1;
        self.ops.add(to, Op::Migration, 1);
        if h.tracing() {
            let curr = self.rqs[by].curr;
            let migrate = Tracepoint::Migrate {
                task: id,
                from,
                to,
                cpu: by,
                curr,
            };
            h.trace(&self.tasks, migrate);
        }
    }

    /// `__set_task_cpu`: task `id` is on `cpu`, its entity to be queued on its group's
    /// cfs_rq there, under the group's entity there (`set_task_rq`).
    fn set_task_rq(&mut self, id: u32, cpu: usize) {
        let t = &mut self.tasks[id as usize];
        t.cpu = cpu;
        let tg = &self.tgs[t.tg as usize];
        let parent = tg.se(cpu);
        let depth = parent.map_or(0, |p| self.ses[p as usize].depth + 1);
        let se = &mut self.ses[t.se as usize];
        (se.cfs_rq, se.parent, se.depth) = (tg.cfs_rq(cpu), parent, depth);
    }

    /// `move_queued_task` (push and pull) by CPU `by`: `deactivate_task` + `set_task_cpu` +
    /// `activate_task` of a queued, not running task.
    pub(super) fn move_queued_task<H: Hooks>(
        &mut self,
        id: u32,
        (from, to): (usize, usize),
        by: usize,
        h: &mut H,
    ) {
        self.update_rq_clock(from, h.now());
        self.detach_task(id, from, h);
        self.attach_task(id, (from, to), by, h);
    }

    /// `deactivate_task` of a migrating task (TASK_ON_RQ_MIGRATING): off `from`'s queues.
    pub(crate) fn detach_task<H: Hooks>(&mut self, id: u32, from: usize, h: &mut H) {
        let t = &mut self.tasks[id as usize];
        t.sched_info.dequeue(&mut self.rqs[from].stats, h.now());
        let class = self.class(id);
        self.uclamp_dec(id, from);
        self.on_rq(from, h, |rq, env| {
            class.dequeue_task(rq, env, id, DEQUEUE_MIGRATING);
        });
    }

    /// `set_task_cpu` by CPU `by` (with the class's `migrate_task_rq`) + `activate_task` on
    /// `to`, which adds ENQUEUE_MIGRATED for a migrating task.
    pub(crate) fn attach_task<H: Hooks>(
        &mut self,
        id: u32,
        (from, to): (usize, usize),
        by: usize,
        h: &mut H,
    ) {
        let class = self.class(id);
        self.on_rq(from, h, |rq, env| class.migrate_task_rq(rq, env, id, true));
        self.set_task_cpu(id, (from, to), by, h);
        self.update_rq_clock(to, h.now());
        self.tasks[id as usize].sched_info.enqueue(h.now());
        self.enqueue_task((id, to), false, h, |rq, env| {
            class.enqueue_task(rq, env, id, ENQUEUE_MIGRATING | ENQUEUE_MIGRATED)
        });
    }

    /// `wakeup_preempt`: the idle task always yields; a task of the same class asks the
    /// class (the fair class lazily, `resched_curr_lazy`); a task of a higher class is
    /// preempted by any of a lower one's.
    pub(crate) fn wakeup_preempt<H: Hooks>(
        &mut self,
        cpu: usize,
        id: u32,
        wake_flags: u32,
        h: &mut H,
    ) {
        let p = self.tasks[id as usize].class;
        let resched = match self.rqs[cpu].curr {
            None => true,
            Some(curr) if self.tasks[curr as usize].class == p => {
                self.note_entities(cpu, ("check_preempt_wakeup_fair", "check_preempt_wakeup"));
                self.on_rq(cpu, h, |rq, env| p.wakeup_preempt(rq, env, id, wake_flags))
            }
            Some(curr) => p.above(self.tasks[curr as usize].class),
        };
        self.decide(
            Kind::WakeupPreempt,
            (h.now(), cpu),
            Some(id),
            resched as i64,
            "",
        );
        let rq = &mut self.rqs[cpu];
        if resched && p == Class::Fair && rq.curr.is_some() {
            rq.resched_lazy(self.feat.preempt == Preempt::Lazy);
        } else if resched {
            rq.resched();
        }
        if rq.need_resched {
            // A queue event with a schedule to come: no back-to-back clock update (the idle
            // task counts as queued: init_idle sets its on_rq).
            rq.clock_skip |= rq.curr.is_none_or(|c| self.tasks[c as usize].queued());
            self.resched_asked(cpu, h);
        }
    }

    /// `schedule()` on `cpu`: pick (`__schedule`), let the machine switch, run the balance
    /// callbacks the pick queued (a deadline or RT task picked pushes others away) and start
    /// the hrtick (`finish_lock_switch`), then let the task go on, and run the task work of
    /// its return to user space.
    #[inline]
    pub fn schedule<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        self.hrtick_schedule_enter(cpu);
        let sw = self.pick_next(cpu, h);
        h.context_switch(self, cpu, sw);
        if let Some(n) = sw.next.filter(|&n| Some(n) != sw.prev) {
            let class = self.tasks[n as usize].class;
            class.queue_push_tasks(self, cpu, h);
        }
        self.hrtick_schedule_exit(cpu, h);
        h.switched_in(self, cpu, sw);
        if let Some(n) = sw.next {
            self.throttle_cfs_rq_work(cpu, n, h);
        }
    }

    /// `__schedule`: pick the next thread with the running one still current, then
    /// `put_prev_set_next_task`, which does nothing when the pick is prev again (so a fair
    /// task's slice goes on: `prev_sum_exec_runtime` is not reset). Simplified: 6.1 puts
    /// prev back before the pick when an RT or deadline task is involved (its slow path);
    /// schedlab picks first under both kernels, as 6.12 and 6.1's fair fast path do.
    #[inline]
    fn pick_next<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> Switch {
        // The clock update that RQCF_ACT_SKIP skips (a wakeup asked it).
        if !std::mem::take(&mut self.rqs[cpu].clock_skip) {
            self.update_rq_clock(cpu, h.now());
        }
        let prev = self.rqs[cpu].curr;
        let prev_class = prev.map(|p| self.class(p));
        // __pick_next_task's fast path: with a fair prev and only fair tasks queued,
        // pick_next_task_fair balances at its idle label, after its pick, which may have
        // dequeued delayed tasks or throttled a cfs_rq (so found none with nr_running > 0).
        let fast = prev_class == Some(Class::Fair) && self.rqs[cpu].nr_running_rt_dl() == 0;
        if let (Some(p), false) = (prev, fast) {
            self.in_schedule(cpu, |s| s.prev_balance(cpu, p, h));
        }
        let from = prev.zip(prev_class);
        self.note_entities(cpu, ("pick_eevdf", "pick_next_entity"));
        // One pass over the runqueue unless the fast path's pick leaves nothing.
        let picked = self.on_rq(cpu, h, |rq, env| {
            let next = class::pick_next_task(rq, env);
            (!fast || next.is_some()).then(|| switch_tasks(rq, env, from, next))
        });
        let next = match picked {
            Some(next) => next,
            None => {
                let pulled = self.in_schedule(cpu, |s| s.sched_balance_newidle(cpu, h));
                self.on_rq(cpu, h, |rq, env| {
                    // goto again, when a task came
                    let next = pulled.then(|| class::pick_next_task(rq, env)).flatten();
                    switch_tasks(rq, env, from, next)
                })
            }
        };
        self.rqs[cpu].curr = next;
        let outcome = next.map_or(-1, |n| n as i64);
        self.decide(Kind::PickNextTask, (h.now(), cpu), None, outcome, "");
        if next.is_none() && prev.is_some() {
            self.update_idle_core(cpu); // set_next_task_idle
                                        // nohz_balance_enter_idle: its load is blocked now, for the NOHZ stats to decay.
            self.rqs[cpu].has_blocked_load = true;
            self.nohz_has_blocked = true;
        }
        self.rqs[cpu].stats.sched_count += 1; // schedule_debug
        let prev_state = if next != prev {
            self.ops.add(cpu, Op::ContextSwitch, 1);
            self.account_switch(cpu, prev, next, h.now())
        } else {
            PrevState::Runnable
        };
        Switch {
            prev,
            next,
            prev_state,
        }
    }

    /// `op` with `cpu` inside `__schedule`, between prev and the pick (a resched only flags).
    fn in_schedule<R>(&mut self, cpu: usize, op: impl FnOnce(&mut Self) -> R) -> R {
        self.rqs[cpu].in_schedule = true;
        let r = op(self);
        self.rqs[cpu].in_schedule = false;
        r
    }

    /// `prev_balance`: from prev's class down while none has work, each class may pull.
    #[inline]
    fn prev_balance<H: Hooks>(&mut self, cpu: usize, prev: u32, h: &mut H) {
        let class = self.tasks[prev as usize].class;
        class.balance(self, cpu, prev, h);
    }

    /// The states and statistics of a switch from `prev` to `next` on `cpu`, with
    /// `sched_info_switch` and, to idle, `sched_goidle`.
    #[inline]
    fn account_switch(
        &mut self,
        cpu: usize,
        prev: Option<u32>,
        next: Option<u32>,
        now: u64,
    ) -> PrevState {
        let mut prev_state = PrevState::Runnable;
        let rq = &mut self.rqs[cpu].stats;
        if let Some(p) = prev {
            let t = &mut self.tasks[p as usize];
            match t.state {
                TaskState::Running => {
                    t.set_state(TaskState::Runnable, now);
                    t.stats.preemptions += 1;
                }
                TaskState::Dead => prev_state = PrevState::Dead,
                _ => prev_state = PrevState::Sleeping,
            }
            let runnable = t.state == TaskState::Runnable;
            t.sched_info.depart(rq, now, runnable);
        }
        rq.sched_goidle += next.is_none() as u32; // set_next_task_idle
        if let Some(n) = next {
            let t = &mut self.tasks[n as usize];
            t.sched_info.arrive(rq, now);
            t.set_state(TaskState::Running, now);
            if let Some(w) = t.woken_at.take() {
                t.stats.wakeup_latencies.record(now - w);
            }
        }
        prev_state
    }

    /// `cpu`'s RT or deadline signal to now (`running`: that class runs), traced when it
    /// changed.
    pub(crate) fn update_rq_avg<H: Hooks>(
        &mut self,
        cpu: usize,
        which: RqAvg,
        running: bool,
        h: &mut H,
    ) {
        let rq = &mut self.rqs[cpu];
        if rq.update_class_avg(which, running) && h.tracing() {
            h.trace(&self.tasks, rq.pelt_tp(cpu, which));
        }
    }

    /// `sched_tick` → the running task's `task_tick`, cpufreq, the periodic balance. False
    /// when the CPU is idle (its tick stops).
    pub fn sched_tick<H: Hooks>(&mut self, cpu: usize, h: &mut H) -> bool {
        let Some(curr) = self.rqs[cpu].curr else {
            return false;
        };
        self.update_rq_clock(cpu, h.now());
        self.ops.add(cpu, Op::Tick, 1);
        // 7.x: a lazy reschedule still pending from before is made full.
        let promote = self.rqs[cpu].need_resched && self.rqs[cpu].lazy_asked;
        let class = self.tasks[curr as usize].class;
        self.rqs[cpu].update_hw_avg();
        // The RT and deadline signals of a CPU running another class's task decay here,
        // where the kernel's periodic balancing does it (`__update_blocked_others`); the
        // running class's own is its task_tick's.
        for (which, own) in [(RqAvg::Rt, Class::Rt), (RqAvg::Dl, Class::Deadline)] {
            if class != own {
                self.update_rq_avg(cpu, which, false, h);
            }
        }
        let resched = self.on_rq(cpu, h, |rq, env| class.task_tick(rq, env, curr));
        h.cpufreq_update_util(self, cpu, Hook::Tick);
        self.sched_balance_trigger(cpu, h);
        if promote {
            self.resched_curr(cpu, h);
        } else if resched || self.rqs[cpu].need_resched {
            self.resched_asked(cpu, h);
        }
        true
    }

    /// The running thread `id` stops: sleep, block or exit (`deactivate_task` in
    /// `__schedule`, `do_exit`).
    pub fn deactivate<H: Hooks>(&mut self, id: u32, state: TaskState, h: &mut H) {
        let cpu = self.tasks[id as usize].cpu;
        debug_assert_eq!(self.rqs[cpu].curr, Some(id));
        let now = h.now();
        if !self.rqs[cpu].clock_skip {
            self.update_rq_clock(cpu, now); // __schedule's, skipped as in pick_next
        }
        let flags = if state == TaskState::Dead {
            DEQUEUE_SLEEP | DEQUEUE_SPECIAL
        } else {
            DEQUEUE_SLEEP
        };
        let class = self.class(id);
        self.uclamp_dec(id, cpu);
        let dequeued = self.on_rq(cpu, h, |rq, env| {
            let dequeued = class.dequeue_task(rq, env, id, flags);
            if state == TaskState::Dead {
                class.task_dead(rq, env, id);
            }
            dequeued
        });
        if dequeued == Dequeued::Released {
            self.dl_release(id);
        }
        h.cpufreq_update_util(self, cpu, Hook::Sleep);
        self.set_state(id, state, now);
        let t = &mut self.tasks[id as usize];
        if state == TaskState::Dead {
            t.stats.ended_at = Some(now);
        }
        self.schedule(cpu, h);
    }

    /// `sched_yield()`.
    pub fn sched_yield<H: Hooks>(&mut self, id: u32, h: &mut H) {
        let cpu = self.tasks[id as usize].cpu;
        self.rqs[cpu].stats.yld_count += 1;
        self.update_rq_clock(cpu, h.now());
        let class = self.class(id);
        self.on_rq(cpu, h, |rq, env| class.yield_task(rq, env, id));
        self.schedule(cpu, h);
    }

    /// A scheduler timer's interrupt, at or after its expiry; false when the timer was stale
    /// (cancelled or re-armed since).
    pub fn timer<H: Hooks>(&mut self, t: SchedTimer, h: &mut H) -> bool {
        match t {
            SchedTimer::Dl { se, kind, gen } => self.dl_timer_fired(se, kind, gen, h),
            SchedTimer::RtPeriod => self.rt_period_timer(h),
            SchedTimer::CfsPeriod { tg } => self.sched_cfs_period_timer(tg, h),
            SchedTimer::CfsSlack { tg } => self.sched_cfs_slack_timer(tg, h),
            SchedTimer::Hrtick { cpu } => self.hrtick(cpu as usize, h),
        }
    }

    /// The CPU whose interrupt serves timer `t`: the hrtick's own, a deadline entity's (a
    /// fair server's is its CPU's). Simplified: a group's bandwidth timers and RT throttling's
    /// period timer are CPU 0's, where the kernel's are the CPU that started them.
    pub fn timer_cpu(&self, t: SchedTimer) -> usize {
        match t {
            SchedTimer::Hrtick { cpu } => cpu as usize,
            SchedTimer::Dl { se, .. } => self.dls[se as usize]
                .task
                .map_or(se as usize, |id| self.tasks[id as usize].cpu),
            SchedTimer::RtPeriod | SchedTimer::CfsPeriod { .. } | SchedTimer::CfsSlack { .. } => 0,
        }
    }

    /// The machine changed `cpu`'s frequency: `arch_freq_scale` from now, the clock brought
    /// up to date at the old one first.
    pub fn set_freq_scale(&mut self, cpu: usize, freq_scale: u64, now: u64) {
        self.update_rq_clock(cpu, now);
        self.rqs[cpu].clock.scale.freq = freq_scale;
    }
}

/// `put_prev_set_next_task` from `prev` to the pick `next` (nothing when it is prev again),
/// and TIF_NEED_RESCHED cleared: the next task's id.
fn switch_tasks(
    rq: &mut Rq,
    env: &mut Env,
    prev: Option<(u32, Class)>,
    next: Option<(Class, u32)>,
) -> Option<u32> {
    if next.map(|(_, n)| n) != prev.map(|(p, _)| p) {
        match (prev, next) {
            // pick_next_task_fair: only the levels that change (not when the fair server
            // picked: the deadline class's path puts and sets whole).
            (Some((p, Class::Fair)), Some((Class::Fair, n))) if !rq.dl_server => {
                put_prev_set_next_fair(rq, env, p, n)
            }
            (prev, next) => {
                match prev {
                    Some((p, c)) => c.put_prev_task(rq, env, p),
                    None => idle::put_prev_task_idle(rq, env),
                }
                match next {
                    Some((c, n)) => c.set_next_task(rq, env, n),
                    None => idle::set_next_task_idle(rq, env),
                }
            }
        }
    }
    (rq.need_resched, rq.lazy, rq.lazy_asked) = (false, false, false);
    next.map(|(_, n)| n)
}
