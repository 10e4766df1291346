//! What `schedlab compare --explain` reads: each scheduling decision as it is made (where a
//! waking task goes, what a CPU picks, whether a wakeup preempts, what a balance pass pulls,
//! which frequency a policy takes), with the values the kernel functions weighed for it.
//! Off unless asked (`Sched::explain`): then each decision point costs one test of an empty
//! slot and builds nothing.

use super::fair::SeId;
use super::features::FairPolicy;
use super::Sched;
use crate::time::Ns;
use smallvec::{smallvec, SmallVec};
use std::cell::RefCell;

/// The entities a pick's note shows at most (the earliest deadlines; a pick is among them
/// unless more as early are not eligible).
const ENTITIES: usize = 8;

/// The kinds of decision, named by the kernel function that makes each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `select_task_rq`: the CPU a waking or new task goes to.
    SelectTaskRq,
    /// `__schedule`'s pick: the task a CPU runs next (none: idle).
    PickNextTask,
    /// `wakeup_preempt`: whether a woken task preempts the CPU's current one.
    WakeupPreempt,
    /// `detach_tasks`: a task a load balance pass pulls to its CPU.
    DetachTasks,
    /// `cpufreq_update_util` and the governor: a policy's new frequency.
    CpufreqTarget,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::SelectTaskRq => "select_task_rq",
            Kind::PickNextTask => "pick_next_task",
            Kind::WakeupPreempt => "wakeup_preempt",
            Kind::DetachTasks => "detach_tasks",
            Kind::CpufreqTarget => "cpufreq_target",
        }
    }
}

/// What a note's values are of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum About {
    /// The decision's own subject.
    Subject,
    Cpu(usize),
    /// A fair entity: a task's, or a group's on a CPU (`Sched::entity_name`).
    Entity(SeId),
}

/// Values one kernel function used on the way to a decision (inline: a pick notes up to
/// `ENTITIES` entities, and no note allocates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub func: &'static str,
    pub about: About,
    pub values: Values,
}

/// A note's values by name.
pub type Values = SmallVec<[(&'static str, i64); 6]>;

/// One decision: made at `at` on `cpu` (the waker's, the picking, preempted or balancing
/// CPU, a policy's first CPU) about `task` (the woken, pulled or waking task), with its
/// `outcome` (a CPU, a task id, −1 for idle, 1 or 0, kHz) and, for a placement, the rule
/// that chose it; `why` the notes taken since the previous decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub at: Ns,
    pub kind: Kind,
    pub cpu: usize,
    pub task: Option<u32>,
    pub outcome: i64,
    pub how: &'static str,
    pub why: Vec<Note>,
}

impl Decision {
    /// What two runs' decisions are matched by: the kind, and its task (a placement, a
    /// pull) or its CPU (a pick, a preemption, a frequency).
    pub fn subject(&self) -> (Kind, u32) {
        match self.kind {
            Kind::SelectTaskRq | Kind::DetachTasks => (self.kind, self.task.unwrap_or(u32::MAX)),
            _ => (self.kind, self.cpu as u32),
        }
    }

    /// Whether `other` decided the same: the same outcome by the same rule.
    pub fn same(&self, other: &Decision) -> bool {
        (self.outcome, self.how) == (other.outcome, other.how)
    }
}

/// The decisions made since last taken, and the notes of the one being made.
#[derive(Debug, Default)]
pub struct Explain {
    notes: Vec<Note>,
    decisions: Vec<Decision>,
}

impl Sched {
    /// Record decisions from now on (`compare --explain`).
    pub fn explain(&mut self) {
        self.explain = RefCell::new(Some(Explain::default()));
    }

    /// Whether decisions are being recorded.
    #[inline(always)]
    pub(crate) fn explaining(&self) -> bool {
        self.explain.borrow().is_some()
    }

    /// Note the values `func` used, of `about`, built only when recording.
    #[inline(always)]
    pub(crate) fn note(&self, func: &'static str, note: impl FnOnce() -> (About, Values)) {
        if let Some(x) = self.explain.borrow_mut().as_mut() {
            let (about, values) = note();
            x.notes.push(Note {
                func,
                about,
                values,
            });
        }
    }

    /// Record a decision with the notes taken for it.
    #[inline(always)]
    pub(crate) fn decide(
        &self,
        kind: Kind,
        (at, cpu): (Ns, usize),
        task: Option<u32>,
        outcome: i64,
        how: &'static str,
    ) {
        if let Some(x) = self.explain.borrow_mut().as_mut() {
            let why = std::mem::take(&mut x.notes);
            x.decisions.push(Decision {
                at,
                kind,
                cpu,
                task,
                outcome,
                how,
                why,
            });
        }
    }

    /// Record a policy's frequency change (`cpufreq_update_util` → the governor), made on
    /// its first CPU, noting each CPU's `cpu_util_cfs_boost`.
    pub fn explain_frequency(&self, cpus: &[usize], at: Ns, khz: u32) {
        if !self.explaining() {
            return;
        }
        for &cpu in cpus {
            let util = self.cpufreq_util(cpu).util_boost as i64;
            self.note("cpufreq_update_util", || {
                (About::Cpu(cpu), smallvec![("util", util)])
            });
        }
        self.decide(Kind::CpufreqTarget, (at, cpus[0]), None, khz as i64, "");
    }

    /// A fair entity by name: its task's (`comm-pid`), or its group's path.
    pub fn entity_name(&self, se: SeId) -> String {
        let e = &self.ses[se as usize];
        match e.my_q {
            Some(q) => self.tgs[self.cfs_rqs[q as usize].tg as usize].path.clone(),
            None => self.task_name(e.task),
        }
    }

    /// A task as the trace names it: `comm-pid`.
    pub fn task_name(&self, p: u32) -> String {
        let t = &self.tasks[p as usize];
        format!("{}-{}", t.comm, t.pid)
    }

    /// Move the decisions recorded since last asked, in the order they were made, into
    /// `into` (empty; it keeps its capacity for the next ones).
    pub fn take_decisions(&mut self, into: &mut Vec<Decision>) {
        if let Some(x) = self.explain.get_mut().as_mut() {
            std::mem::swap(&mut x.decisions, into);
        }
    }

    /// Note the fair entities `cpu`'s root cfs_rq would pick from, as `func` (its EEVDF
    /// and its CFS name) sees them: the running one first, then the queued ones in the
    /// timeline's order. Under EEVDF (by deadline) each one's vruntime, virtual deadline,
    /// lag (V − v) and eligibility; under CFS (by vruntime, no V kept) its vruntime.
    /// Simplified: the first `ENTITIES` only.
    pub(crate) fn note_entities(&self, cpu: usize, func: (&'static str, &'static str)) {
        if !self.explaining() {
            return;
        }
        let cfs = &self.cfs_rqs[cpu];
        let eevdf = self.tun.policy == FairPolicy::Eevdf;
        let h_loads = self.feat.flat().then_some(&*self.h_loads);
        let running = cfs.curr.filter(|&c| self.ses[c as usize].on_rq);
        for se in running
            .into_iter()
            .chain(cfs.timeline.iter())
            .take(ENTITIES)
        {
            let e = &self.ses[se as usize];
            let is_running = ("running", (Some(se) == running) as i64);
            if !eevdf {
                let values = smallvec![("vruntime", e.vruntime as i64), is_running];
                self.note(func.1, || (About::Entity(se), values));
                continue;
            }
            let (lag, eligible) = super::fair::eevdf::lag_of(cfs, &self.ses, se, h_loads);
            self.note(func.0, || {
                let values = smallvec![
                    ("vruntime", e.vruntime as i64),
                    ("deadline", e.deadline as i64),
                    ("lag", lag),
                    ("eligible", eligible as i64),
                    is_running,
                ];
                (About::Entity(se), values)
            });
        }
    }
}
