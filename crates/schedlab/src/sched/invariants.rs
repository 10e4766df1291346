//! What must hold between any two events, checked after every event in debug builds (the
//! test suite): the kernel's own SCHED_WARN_ONs, and the accounting identities that
//! schedlab's figures rest on. A broken one panics, naming it.

use super::fair::timeline::Key;
use super::fair::CfsRqId;
use super::features::FairPolicy;
use super::pelt::{
    SchedAvg, LOAD_AVG_MAX, PELT_MIN_DIVIDER, RUNNABLE_AVG_YN_INV, SCHED_CAPACITY_SCALE,
};
use super::task::{SchedTask, TaskState};
use super::Sched;
use crate::time::Ns;

/// The most an entity's `util_sum` or `runnable_sum` reaches: they gain up to 1024 << 10 a
/// period and decay by y each, so they stay below S = 2^20 / (1 − y) ≈ 48,934,993 (with
/// y = runnable_avg_yN_inv[1] / 2^32). That is above LOAD_AVG_MAX << 10: these sums,
/// shifted by SCHED_CAPACITY_SHIFT, lose less to truncation than the unshifted series
/// LOAD_AVG_MAX was computed from.
const MAX_SUM: u64 = (1 << 52) / ((1 << 32) - RUNNABLE_AVG_YN_INV[1] as u64) + 1;

/// Hence the most their averages reach: S·y / PELT_MIN_DIVIDER = 1025 (at a period
/// boundary, when the divider is smallest).
const MAX_AVG: u64 = SCHED_CAPACITY_SCALE + 1;

impl Sched {
    /// Panic on the first broken invariant at `now`.
    pub fn check_invariants(&self, now: Ns) {
        self.check_placement();
        self.check_timelines();
        self.check_task_time(now);
        self.check_pelt();
        self.check_dl_bw();
        self.check_limbo();
    }

    /// 6.18+: every task on a cfs_rq's limbo list is throttled, off the runqueue, of that
    /// cfs_rq, whose hierarchy is throttled; every throttled task is on one list.
    fn check_limbo(&self) {
        let mut listed = 0;
        for (q, c) in self.cfs_rqs.iter().enumerate() {
            for p in self.limbo(c) {
                let se = &self.ses[self.tasks[p as usize].se as usize];
                assert!(
                    self.throttle_nodes[p as usize].throttled
                        && !se.on_rq
                        && se.cfs_rq as usize == q
                        && c.throttle_count != 0,
                    "task {p} on cfs_rq {q}'s limbo list"
                );
                listed += 1;
            }
        }
        let throttled = self.throttle_nodes.iter().filter(|n| n.throttled).count();
        assert_eq!(listed, throttled, "throttled tasks off the limbo lists");
    }

    /// Every cfs_rq's timeline is ordered by the policy's key, its links and subtree minima
    /// consistent.
    fn check_timelines(&self) {
        let key = match self.feat.fair {
            FairPolicy::Eevdf => Key::Deadline,
            FairPolicy::Cfs => Key::Vruntime,
        };
        for (i, cfs) in self.cfs_rqs.iter().enumerate() {
            if let Err(e) = cfs.timeline.check(&self.ses, key) {
                panic!("cfs_rq {i}'s timeline: {e}");
            }
        }
    }

    /// The tasks queued on cfs_rq `q` and the groups below it, curr included.
    fn fair_tasks_queued(&self, q: CfsRqId) -> Vec<u32> {
        let cfs = &self.cfs_rqs[q as usize];
        let mut out = Vec::new();
        for se in cfs.timeline.iter().chain(cfs.curr) {
            match self.ses[se as usize].my_q {
                Some(g) => out.extend(self.fair_tasks_queued(g)),
                None => out.push(self.ses[se as usize].task),
            }
        }
        out
    }

    /// A task is queued on one CPU at most; a running task is its CPU's `curr`, and a CPU's
    /// `curr` is running.
    fn check_placement(&self) {
        let mut on: Vec<Option<usize>> = vec![None; self.tasks.len()];
        for (cpu, rq) in self.rqs.iter().enumerate() {
            let fair = self.fair_tasks_queued(cpu as CfsRqId);
            let dl = rq
                .dl
                .queued()
                .filter_map(|(_, p)| self.dls[p as usize].task);
            for t in fair
                .into_iter()
                .chain(rq.rt.queued())
                .chain(dl)
                .chain(rq.curr)
            {
                match on[t as usize].replace(cpu) {
                    Some(other) if other != cpu => {
                        panic!("task {t} is on the runqueues of CPU {other} and CPU {cpu}")
                    }
                    _ => {}
                }
            }
            if let Some(t) = rq.curr {
                let state = self.tasks[t as usize].state;
                assert_eq!(
                    state,
                    TaskState::Running,
                    "CPU {cpu} runs task {t}, {state:?}"
                );
            }
        }
        // rq->cfs_tasks lists each queued fair task of its CPU, once.
        for (cpu, rq) in self.rqs.iter().enumerate() {
            let on_cpu = |t: &SchedTask| t.cpu == cpu && self.ses[t.se as usize].on_rq;
            let queued = self.tasks.iter().filter(|t| on_cpu(t)).count();
            let list: Vec<u32> = rq.cfs_tasks.iter(&self.group_nodes).collect();
            let listed = list.iter().filter(|&&p| on_cpu(&self.tasks[p as usize]));
            assert!(
                listed.count() == queued && list.len() == queued && rq.cfs_tasks.len() == queued,
                "CPU {cpu}'s cfs_tasks {list:?} are not its {queued} queued fair tasks"
            );
        }
        for (id, t) in self.tasks.iter().enumerate() {
            if t.state == TaskState::Running {
                assert_eq!(
                    self.rqs[t.cpu].curr,
                    Some(id as u32),
                    "task {id} runs off CPU {}",
                    t.cpu
                );
            }
        }
    }

    /// run + wait + sleep = lifetime, per task.
    fn check_task_time(&self, now: Ns) {
        for t in &self.tasks {
            let s = &t.stats;
            let open = if t.state == TaskState::Dead {
                0
            } else {
                now - t.state_since
            };
            let lifetime = s.ended_at.unwrap_or(now) - s.created_at;
            assert_eq!(
                s.run_ns + s.wait_ns + s.sleep_ns + open,
                lifetime,
                "{}: run {} + wait {} + sleep {} + {} in {:?} is not its lifetime",
                t.comm,
                s.run_ns,
                s.wait_ns,
                s.sleep_ns,
                open,
                t.state
            );
        }
    }

    /// Every task's PELT signals within their maxima, the RT and deadline ones too; every
    /// cfs_rq's util and runnable sums at least their averages times PELT_MIN_DIVIDER (the
    /// kernel keeps them synced so that a removal never leaves a sum its average cannot
    /// come from). Not load_sum: `attach_entity_load_avg` adds w·⌊load_avg·divider / w⌋,
    /// up to w − 1 short of load_avg·divider, and only the next removal restores the floor.
    fn check_pelt(&self) {
        for t in &self.tasks {
            let a = &self.ses[t.se as usize].avg;
            let weight = self.ses[t.se as usize].weight();
            assert!(
                bounded(a) && a.load_sum <= LOAD_AVG_MAX as u64 && a.load_avg <= weight,
                "{}'s se: PELT signals above their maxima (weight {weight}): {a:?}",
                t.comm
            );
        }
        for (cpu, rq) in self.rqs.iter().enumerate() {
            for (class, a) in [("rt", &rq.avg_rt), ("dl", &rq.avg_dl)] {
                assert!(
                    bounded(a),
                    "CPU {cpu}'s avg_{class} above its maxima: {a:?}"
                );
            }
        }
        for (i, cfs) in self.cfs_rqs.iter().enumerate() {
            let a = &cfs.avg;
            let floor = PELT_MIN_DIVIDER as u64;
            assert!(
                a.util_sum as u64 >= a.util_avg * floor && a.runnable_sum >= a.runnable_avg * floor,
                "cfs_rq {i}: sums out of sync with their averages: {a:?}"
            );
        }
    }

    /// `running_bw ≤ this_bw` on every deadline runqueue (`__add_running_bw`'s warning).
    fn check_dl_bw(&self) {
        for (cpu, rq) in self.rqs.iter().enumerate() {
            let dl = &rq.dl;
            assert!(
                dl.running_bw <= dl.this_bw,
                "CPU {cpu}: running_bw {} above this_bw {}",
                dl.running_bw,
                dl.this_bw
            );
        }
    }
}

/// util and runnable of one entity (or class) within their maxima.
fn bounded(a: &SchedAvg) -> bool {
    a.util_avg <= MAX_AVG
        && a.runnable_avg <= MAX_AVG
        && a.util_sum as u64 <= MAX_SUM
        && a.runnable_sum <= MAX_SUM
}
