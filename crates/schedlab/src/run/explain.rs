//! `schedlab compare --explain`: two runs of one workload in lock-step, the one behind in
//! simulated time stepped next, their scheduling decisions matched as they are made, until
//! the first `n` that differ. Decisions are matched by kind and subject (the woken or pulled
//! task, the picking or preempted CPU, the policy) and their order among that subject's: the
//! k-th placement of task t in one run against the k-th in the other. Until the first
//! divergence the runs decide alike, so that one is exact; later ones may follow from it.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::spec::{inputs, RunError, RunSpec};
use crate::sched::explain::{About, Decision, Kind, Values};
use crate::sim::{Sim, Step, SIM_START};
use crate::time::Ns;

/// Decisions of context shown on each side of a divergence.
pub const CONTEXT: usize = 6;
/// Decisions each run keeps for context: the other run may be this far ahead.
const KEPT: usize = 256;

/// One decision, shown: its task, outcome and notes named as the trace names them.
#[derive(Debug, Clone)]
pub struct Shown {
    pub decision: Decision,
    /// The task decided about (`comm-pid`).
    pub task: Option<String>,
    /// What was decided: `cpuN`, a task, `idle`, `resched` or `none`, kHz.
    pub outcome: String,
    /// Each note: its function, what its values are of (empty: the decision's subject), and
    /// the values.
    pub why: Vec<(&'static str, String, Values)>,
}

/// A decision the runs took differently: each side's (None: that run made no such decision
/// before it ended), the decisions before it and the first ones after it; `D` is a
/// `Decision` while the search goes on, `Shown` once named.
#[derive(Debug, Clone)]
pub struct Divergence<D = Shown> {
    /// This decision's place among its subject's (0: the first).
    pub ordinal: u64,
    pub sides: [Option<D>; 2],
    pub before: [Vec<D>; 2],
    pub after: [Vec<D>; 2],
}

impl<D> Divergence<D> {
    /// Rank `ordinal`'s, its sides and context to fill in.
    fn new(ordinal: u64) -> Divergence<D> {
        Divergence {
            ordinal,
            sides: [None, None],
            before: [Vec::new(), Vec::new()],
            after: [Vec::new(), Vec::new()],
        }
    }
}

/// A divergence being found: its decisions not yet named (their notes only on the pair).
type Found = Divergence<Decision>;

/// What the lock-step found: up to `n` divergences, and how far each run got.
#[derive(Debug, Clone)]
pub struct Explained {
    pub divergences: Vec<Divergence>,
    /// Decisions compared (matched on both sides).
    pub compared: u64,
    /// Each run's simulated time when the search stopped.
    pub simulated: [Ns; 2],
}

/// One run of the pair.
struct Side {
    sim: Sim,
    over: bool,
    /// The latest decisions without their notes, numbered in the order made, for context.
    recent: VecDeque<(u64, Decision)>,
    made: u64,
    /// Decisions not yet matched, by subject, each with its ordinal and number.
    pending: FxHashMap<(Kind, u32), VecDeque<Numbered>>,
    /// Decisions made so far, by subject.
    counts: FxHashMap<(Kind, u32), u64>,
}

/// A decision with its place among its subject's (`ordinal`) and among its run's (`seq`).
struct Numbered {
    ordinal: u64,
    seq: u64,
    decision: Decision,
}

/// A decision without its notes (context shows none).
fn brief(d: &Decision) -> Decision {
    Decision {
        why: Vec::new(),
        ..*d
    }
}

impl Side {
    fn new(spec: &RunSpec) -> Result<Side, RunError> {
        let (wl, plat, feat) = inputs(spec)?;
        let mut sim = Sim::new(&wl, plat, feat, &spec.options())?;
        sim.explain();
        sim.start();
        Ok(Side {
            sim,
            over: false,
            recent: VecDeque::with_capacity(KEPT),
            made: 0,
            pending: FxHashMap::default(),
            counts: FxHashMap::default(),
        })
    }

    /// One event; the decisions it made, into `into` (empty).
    fn step(&mut self, into: &mut Vec<Decision>) -> Result<(), RunError> {
        let step = self.sim.step().map_err(|e| RunError::Io(e.to_string()))?;
        self.over = matches!(step, Step::End { .. });
        self.sim.take_decisions(into);
        Ok(())
    }

    /// `d` with its names.
    fn show(&self, d: Decision) -> Shown {
        let s = self.sim.sched();
        let outcome = match d.kind {
            Kind::SelectTaskRq | Kind::DetachTasks => format!("cpu{}", d.outcome),
            Kind::PickNextTask if d.outcome < 0 => "idle".into(),
            Kind::PickNextTask => s.task_name(d.outcome as u32),
            Kind::WakeupPreempt if d.outcome != 0 => "resched".into(),
            Kind::WakeupPreempt => "none".into(),
            Kind::CpufreqTarget => format!("{} kHz", d.outcome),
        };
        let why = (d.why.iter())
            .map(|n| {
                let about = match n.about {
                    About::Subject => String::new(),
                    About::Cpu(cpu) => format!("cpu{cpu}"),
                    About::Entity(se) => s.entity_name(se),
                };
                (n.func, about, n.values.clone())
            })
            .collect();
        Shown {
            task: d.task.map(|t| s.task_name(t)),
            outcome,
            why,
            decision: d,
        }
    }

    fn shown(&self, v: Vec<Decision>) -> Vec<Shown> {
        v.into_iter().map(|d| self.show(d)).collect()
    }

    /// Number `d` and keep it, without its notes, among the latest.
    fn remember(&mut self, d: &Decision) -> u64 {
        if self.recent.len() == KEPT {
            self.recent.pop_front();
        }
        self.made += 1;
        self.recent.push_back((self.made, brief(d)));
        self.made
    }

    /// The decisions kept before and after decision number `seq`, at most `CONTEXT` each.
    fn around(&self, seq: u64) -> (Vec<Decision>, Vec<Decision>) {
        let before: Vec<&Decision> = (self.recent.iter())
            .filter(|(k, _)| *k < seq)
            .map(|(_, d)| d)
            .collect();
        let after = (self.recent.iter().filter(|(k, _)| *k > seq).take(CONTEXT))
            .map(|(_, d)| d.clone())
            .collect();
        let before = before[before.len().saturating_sub(CONTEXT)..].iter();
        (before.map(|&d| d.clone()).collect(), after)
    }
}

/// Run `a` and `b` in lock-step until `n` decisions have differed (or both runs ended), and
/// each divergence has its context after it. `progress(simulated, total)` is called every
/// 100 ms of the lagging run's simulated time; false stops the search.
pub fn explain(
    a: &RunSpec,
    b: &RunSpec,
    n: usize,
    mut progress: impl FnMut(Ns, Option<Ns>) -> bool,
) -> Result<Explained, RunError> {
    let mut sides = [Side::new(a)?, Side::new(b)?];
    let mut found: Vec<Found> = Vec::new();
    let mut compared = 0u64;
    let mut next_report = SIM_START;
    let total = a.duration.or(b.duration);
    let mut made = Vec::new();
    loop {
        let done = found.len() >= n
            && found
                .iter()
                .all(|d| d.after.iter().all(|v| v.len() >= CONTEXT));
        if done || sides.iter().all(|s| s.over) {
            break;
        }
        // The run behind in simulated time goes next (a at a tie).
        let i = match (sides[0].over, sides[1].over) {
            (false, true) => 0,
            (true, false) => 1,
            _ => (sides[1].sim.now() < sides[0].sim.now()) as usize,
        };
        sides[i].step(&mut made)?;
        for d in made.drain(..) {
            for f in found.iter_mut().filter(|f| f.after[i].len() < CONTEXT) {
                f.after[i].push(brief(&d));
            }
            let seq = sides[i].remember(&d);
            if found.len() < n {
                compared += match_decision(&mut sides, i, seq, d, &mut found) as u64;
            }
        }
        let now = sides[0].sim.now().min(sides[1].sim.now());
        if now >= next_report {
            if !progress(now - SIM_START, total) {
                return Err(RunError::Interrupted);
            }
            next_report = now + 100_000_000;
        }
    }
    unmatched(&mut sides, n, &mut found);
    let divergences = (found.into_iter())
        .map(|mut f| Divergence {
            ordinal: f.ordinal,
            sides: [0, 1].map(|i| f.sides[i].take().map(|d| sides[i].show(d))),
            before: [0, 1].map(|i| sides[i].shown(std::mem::take(&mut f.before[i]))),
            after: [0, 1].map(|i| sides[i].shown(std::mem::take(&mut f.after[i]))),
        })
        .collect();
    Ok(Explained {
        divergences,
        compared,
        simulated: [0, 1].map(|i| sides[i].sim.now() - SIM_START),
    })
}

/// Match side `i`'s decision `d` with the other side's of the same subject and ordinal, or
/// keep it until that one comes; a pair that differs is a divergence. True when compared.
fn match_decision(
    sides: &mut [Side; 2],
    i: usize,
    seq: u64,
    d: Decision,
    found: &mut Vec<Found>,
) -> bool {
    let key = d.subject();
    let count = sides[i].counts.entry(key).or_insert(0);
    let ordinal = *count;
    *count += 1;
    let other = 1 - i;
    let Some(theirs) = (sides[other].pending.get_mut(&key)).and_then(VecDeque::pop_front) else {
        let mine = Numbered {
            ordinal,
            seq,
            decision: d,
        };
        sides[i].pending.entry(key).or_default().push_back(mine);
        return false;
    };
    if !theirs.decision.same(&d) {
        let mut f = Found::new(ordinal);
        (f.before[i], _) = sides[i].around(seq);
        (f.before[other], f.after[other]) = sides[other].around(theirs.seq);
        f.sides[i] = Some(d);
        f.sides[other] = Some(theirs.decision);
        found.push(f);
    }
    true
}

/// With both runs over and fewer than `n` divergences: decisions one run made and the
/// other never did, earliest first.
fn unmatched(sides: &mut [Side; 2], n: usize, found: &mut Vec<Found>) {
    let mut left: Vec<(usize, Numbered)> = Vec::new();
    for (i, side) in sides.iter_mut().enumerate() {
        for (_, queue) in side.pending.drain() {
            left.extend(queue.into_iter().map(|x| (i, x)));
        }
    }
    // Earliest first; at one instant, run a's first, each in the order it made them.
    left.sort_by_key(|(i, x)| (x.decision.at, *i, x.seq));
    for (i, x) in left.into_iter().take(n.saturating_sub(found.len())) {
        let mut f = Found::new(x.ordinal);
        f.sides[i] = Some(x.decision);
        found.push(f);
    }
}
