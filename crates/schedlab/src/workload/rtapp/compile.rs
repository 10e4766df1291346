//! rt-app's front end: a parsed workload compiled into the engine's program format
//! (`workload::program`), with `sched_setattr`'s checks of each task's attributes.
//!
//! `run` is work at the reference speed; `mem`, `iorun` and `memrun` are CPU work of one
//! reference ns per byte touched (per access for `memrun`); `runtime` is wall-clock busy time.

use std::collections::HashMap;

use super::{Calibration, Event, LogSize, SchedParams, Task, Work, Workload};
use crate::error::InputError;
use crate::platform::Platform;
use crate::sched::uapi::{DlAttr, Policy, SchedAttr};
use crate::workload::cgroups::Cgroups;
use crate::workload::program::{
    Clamps, Code, Names, Op, Phase, Program, TaskProgram, TimerRef, WORK_UNITS_PER_NS,
};

/// rt-app's pLoad when `calibration` names a CPU: a nominal value (no busy loop to measure).
pub const NOMINAL_PLOAD_NS: u64 = 100;

/// rt-app's pLoad (ns per loop) for `calibration`.
pub fn pload_ns(calibration: Calibration) -> u64 {
    match calibration {
        Calibration::PLoad(p) => p,
        Calibration::Cpu(_) => NOMINAL_PLOAD_NS,
    }
}

/// What the modelled rt-app does beyond the workload's text.
#[derive(Debug, Clone, Copy)]
pub struct RtappModel {
    /// A fair task's dl-runtime asks a custom slice (upstream rt-app; 1.0 asks none).
    pub custom_slice: bool,
    /// Its threads meet at its start barrier.
    pub start_barrier: bool,
}

/// The thread programs of `wl` on `plat`, as `rtapp` runs them.
pub fn compile(wl: &Workload, plat: &Platform, rtapp: RtappModel) -> Result<Program, InputError> {
    let n = plat.nr_cpus();
    let pload = pload_ns(wl.global.calibration);
    let mut idx: [HashMap<String, u32>; 6] = Default::default();
    let mut names = Names::default();
    let mut barrier_users: Vec<u32> = Vec::new();
    let mut timer_absolute = Vec::new();
    let mut tasks = Vec::new();
    let mut code = Code::default();
    let mut groups = Cgroups::default();
    for t in &wl.tasks {
        let check_cpus =
            |cpus: &Option<Vec<usize>>, at: &str| -> Result<Option<Vec<bool>>, InputError> {
                match cpus {
                    Some(c) if c.iter().any(|&x| x >= n) => Err(InputError::new(
                        format!("tasks.{}{at}.cpus", t.name),
                        format!(
                            "CPU {} is outside the platform {} (CPUs 0-{})",
                            c.iter().max().unwrap(),
                            plat.name,
                            n - 1
                        ),
                    )),
                    Some(c) => Ok(Some(mask(c, n))),
                    None => Ok(None),
                }
            };
        // uclamp_validate: sched_setattr refuses util_min above util_max.
        let check_uclamp = |p: &SchedParams, at: &str| -> Result<Clamps, InputError> {
            match (p.util_min, p.util_max) {
                (Some(lo), Some(hi)) if lo > hi => Err(InputError::new(
                    format!("tasks.{}{at}.util_min", t.name),
                    format!("util_min {lo} is above util_max {hi}"),
                )),
                clamps => Ok(clamps),
            }
        };
        let mut uniq: HashMap<String, u32> = HashMap::new();
        let mut uabs = Vec::new();
        let mut phases = Vec::new();
        for p in &t.phases {
            let mut ops = Vec::new();
            let mut markers = Vec::new();
            for e in &p.events {
                let op = match e {
                    Event::Run(w) => work(*w, pload, 1000),
                    Event::Mem(b) | Event::Iorun(b) => work(Work::Us(*b), pload, 1),
                    Event::Memrun(m) => work(Work::Us(m.count), pload, 1),
                    Event::Runtime(Work::Us(us)) => Op::Runtime {
                        ns: us * 1000,
                        us: *us,
                    },
                    Event::Runtime(Work::Forever) => Op::Runtime {
                        ns: u64::MAX / 4,
                        us: 0,
                    },
                    Event::Sleep(us) => Op::Sleep(us * 1000),
                    Event::Timer {
                        name,
                        period_us,
                        absolute,
                    } => {
                        let timer = if name.starts_with("unique") {
                            let fresh = uniq.len() as u32;
                            let i = *uniq.entry(name.clone()).or_insert(fresh);
                            if i == fresh {
                                uabs.push(false);
                            }
                            uabs[i as usize] |= *absolute;
                            TimerRef::Unique(i)
                        } else {
                            let i = intern(&mut names.timers, &mut idx[5], name);
                            if timer_absolute.len() <= i as usize {
                                timer_absolute.push(false);
                            }
                            timer_absolute[i as usize] |= *absolute;
                            TimerRef::Shared(i)
                        };
                        Op::Timer {
                            timer,
                            period: period_us * 1000,
                        }
                    }
                    Event::Lock(m) => Op::Lock(intern(&mut names.mutexes, &mut idx[0], m)),
                    Event::Unlock(m) => Op::Unlock(intern(&mut names.mutexes, &mut idx[0], m)),
                    Event::Wait { cond, mutex } | Event::Sync { cond, mutex } => {
                        let c = intern(&mut names.conds, &mut idx[1], cond);
                        let m = intern(&mut names.mutexes, &mut idx[0], mutex);
                        if matches!(e, Event::Wait { .. }) {
                            Op::Wait { cond: c, mutex: m }
                        } else {
                            Op::Sync { cond: c, mutex: m }
                        }
                    }
                    Event::Signal(c) => Op::Signal(intern(&mut names.conds, &mut idx[1], c)),
                    Event::Broad(c) => Op::Broad(intern(&mut names.conds, &mut idx[1], c)),
                    Event::Barrier(b) => {
                        let i = intern(&mut names.barriers, &mut idx[2], b);
                        if barrier_users.len() <= i as usize {
                            barrier_users.push(0);
                        }
                        barrier_users[i as usize] += t.instance; // per textual use, as rt-app counts
                        Op::Barrier(i)
                    }
                    Event::SemPost(s) => Op::SemPost(intern(&mut names.sems, &mut idx[3], s)),
                    Event::SemWait(s) => Op::SemWait(intern(&mut names.sems, &mut idx[3], s)),
                    Event::Suspend(s) => Op::Suspend(intern(&mut names.suspends, &mut idx[4], s)),
                    Event::Resume(s) => Op::Resume(intern(&mut names.suspends, &mut idx[4], s)),
                    Event::Yield => Op::Yield,
                    Event::Fork(name) => {
                        Op::Fork(wl.task(name).expect("checked by the parser") as u32)
                    }
                };
                ops.push(op);
                markers.push((e.type_number(), e.desc()));
            }
            phases.push(Phase {
                loops: p.loops,
                ops: code.push(ops, markers),
                nice: p
                    .params
                    .priority
                    .filter(|_| p.params.policy.is_none_or(|x| x.is_fair())),
                uclamp: check_uclamp(&p.params, &format!(".phases.{}", p.name))?,
                cpus: check_cpus(&p.cpus, &format!(".phases.{}", p.name))?,
                group: (p.taskgroup.as_deref())
                    .map(|g| {
                        groups.intern(g, &format!("tasks.{}.phases.{}.taskgroup", t.name, p.name))
                    })
                    .transpose()?,
            });
        }
        let policy = t.params.policy.unwrap_or(Policy::Other);
        tasks.push(TaskProgram {
            name: t.name.clone(),
            instance: t.instance,
            delay: t.delay_us * 1000,
            loops: t.loops,
            attr: {
                let (util_min, util_max) = check_uclamp(&t.params, "")?;
                SchedAttr {
                    policy,
                    nice: if policy.is_fair() {
                        t.params.priority.unwrap_or(0)
                    } else {
                        0
                    },
                    rt_priority: match policy {
                        Policy::Fifo | Policy::Rr => t.params.priority.unwrap_or(10) as u32,
                        _ => 0,
                    },
                    dl: dl_attr(t, policy, n)?,
                    slice: t
                        .params
                        .dl_runtime_us
                        .filter(|&r| r > 0 && policy.is_fair() && rtapp.custom_slice)
                        .map(|r| r * 1000),
                    util_min,
                    util_max,
                    group: (t.taskgroup.as_deref())
                        .map(|g| groups.intern(g, &format!("tasks.{}.taskgroup", t.name)))
                        .transpose()?
                        .unwrap_or(0),
                }
            },
            cpus: check_cpus(&t.cpus, "")?,
            phases,
            unique_absolute: uabs,
            working_set: working_set(t, wl.global.mem_buffer_size),
            work_stretch: Vec::new(),
        });
    }
    let start_barrier_tasks = if rtapp.start_barrier { tasks.len() } else { 0 };
    let main = (start_barrier_tasks > 0).then(|| main_thread(&mut tasks, &mut code));
    let mut prog = Program {
        tasks,
        code,
        names,
        barrier_users,
        start_barrier_tasks,
        main,
        channels: Vec::new(),
        timer_absolute,
        ftrace: wl.global.ftrace,
        logs: wl.global.log_size != LogSize::Disable,
        cumulative_slack: wl.global.cumulative_slack,
        pi: wl.global.pi_enabled,
        groups,
        warnings: unsimulated(wl),
        schbench: None,
        kthreads: Vec::new(),
    };
    for (i, g) in wl.generators.iter().enumerate() {
        let at = format!("generators[{i}].taskgroup");
        let group = (g.taskgroup())
            .map(|path| prog.groups.intern(path, &at))
            .transpose()?
            .unwrap_or(0);
        g.append(&mut prog, group, n).map_err(|(key, cpu)| {
            InputError::new(
                format!("generators[{i}].{key}"),
                format!(
                    "CPU {cpu} is outside the platform {} (CPUs 0-{})",
                    plat.name,
                    n - 1
                ),
            )
        })?;
    }
    Ok(prog)
}

/// rt-app 1.0's main thread (`main`): it creates every thread of `tasks`, in order, then
/// joins them; its task definition's index.
fn main_thread(tasks: &mut Vec<TaskProgram>, code: &mut Code) -> usize {
    let creates = tasks.iter().enumerate();
    let creates = creates.flat_map(|(d, t)| (0..t.instance).map(move |_| Op::Create(d as u32)));
    let ops: Vec<Op> = creates.chain([Op::Join]).collect();
    let markers = vec![(0, String::new()); ops.len()]; // it writes no rtapp_event
    let phase = Phase {
        loops: 1,
        ops: code.push(ops, markers),
        nice: None,
        uclamp: (None, None),
        cpus: None,
        group: None,
    };
    tasks.push(TaskProgram {
        name: "rt-app".into(),
        instance: 1,
        delay: 0,
        loops: 1,
        attr: SchedAttr::of(Policy::Other),
        cpus: None,
        phases: vec![phase],
        unique_absolute: Vec::new(),
        working_set: 0,
        work_stretch: Vec::new(),
    });
    tasks.len() - 1
}

/// What the workload asks for that the engine does not simulate yet: policy changes
/// between phases.
fn unsimulated(wl: &Workload) -> Vec<String> {
    let mut out = Vec::new();
    for t in &wl.tasks {
        for p in &t.phases {
            if p.params.policy.is_some() || p.params.dl_runtime_us.is_some() {
                out.push(format!(
                    "tasks.{}.phases.{}: a phase's policy or deadline parameters are ignored: the thread keeps the task's (changes between phases are not simulated yet)",
                    t.name, p.name
                ));
            }
        }
    }
    out
}

fn intern(list: &mut Vec<String>, index: &mut HashMap<String, u32>, name: &str) -> u32 {
    *index.entry(name.to_string()).or_insert_with(|| {
        list.push(name.to_string());
        list.len() as u32 - 1
    })
}

fn mask(cpus: &[usize], n: usize) -> Vec<bool> {
    let mut m = vec![false; n];
    for &c in cpus {
        m[c] = true;
    }
    m
}

/// `sched_setattr`'s checks of a task's policy and parameters (`__checkparam_dl`,
/// `valid_policy`/priority range, the root-domain span of a deadline task) and the
/// reservation it asks for.
fn dl_attr(t: &Task, policy: Policy, n: usize) -> Result<Option<DlAttr>, InputError> {
    let at = |key: &str| format!("tasks.{}.{key}", t.name);
    let p = &t.params;
    if matches!(policy, Policy::Fifo | Policy::Rr) {
        let prio = p.priority.unwrap_or(10);
        if !(1..=99).contains(&prio) {
            return Err(InputError::new(
                at("priority"),
                format!("{} priority {prio} is outside 1..99", policy.name()),
            ));
        }
    }
    if policy != Policy::Deadline {
        if p.dl_reclaim == Some(true) {
            return Err(InputError::new(
                at("dl-reclaim"),
                format!(
                    "reclaiming (SCHED_FLAG_RECLAIM) needs SCHED_DEADLINE, the task is {}",
                    policy.name()
                ),
            ));
        }
        return Ok(None);
    }
    // rt-app's defaults: period = runtime, deadline = period.
    let runtime = p.dl_runtime_us.unwrap_or(0) * 1000;
    let period = p
        .dl_period_us
        .filter(|&v| v > 0)
        .map_or(runtime, |v| v * 1000);
    let deadline = p
        .dl_deadline_us
        .filter(|&v| v > 0)
        .map_or(period, |v| v * 1000);
    let us = |ns: u64| ns / 1000;
    let bad = |key: &str, msg: String| Err(InputError::new(at(key), msg));
    if period == 0 {
        return bad(
            "dl-period",
            "SCHED_DEADLINE needs a non-zero period (or dl-runtime)".into(),
        );
    }
    if runtime < 1024 {
        return bad(
            "dl-runtime",
            format!("runtime {} ns is below 1024 ns (__checkparam_dl)", runtime),
        );
    }
    if runtime > deadline {
        return bad(
            "dl-runtime",
            format!(
                "runtime {} µs exceeds the deadline {} µs",
                us(runtime),
                us(deadline)
            ),
        );
    }
    if deadline > period {
        return bad(
            "dl-deadline",
            format!(
                "deadline {} µs exceeds the period {} µs",
                us(deadline),
                us(period)
            ),
        );
    }
    if !(100_000..=(1 << 22) * 1000).contains(&period) {
        return bad(
            "dl-period",
            format!(
                "period {} µs is outside 100 µs .. 4194304 µs (sched_dl_period_min/max)",
                us(period)
            ),
        );
    }
    if t.cpus
        .as_ref()
        .is_some_and(|c| (0..n).any(|cpu| !c.contains(&cpu)))
    {
        return bad(
            "cpus",
            format!("a SCHED_DEADLINE task's affinity must span its root domain (CPUs 0-{}): the kernel refuses it (EPERM)", n - 1),
        );
    }
    Ok(Some(DlAttr {
        runtime,
        deadline,
        period,
        reclaim: p.dl_reclaim == Some(true),
    }))
}

/// `run` work: `us` × `scale` reference ns (`scale` 1000 for µs, 1 for bytes).
fn work(w: Work, pload: u64, scale: u128) -> Op {
    match w {
        Work::Us(us) => Op::Work {
            units: us as u128 * scale * WORK_UNITS_PER_NS,
            us: if scale == 1000 { us } else { 0 },
            perf: if scale == 1000 { us / pload } else { 0 },
        },
        Work::Forever => Op::Work {
            units: u128::MAX,
            us: 0,
            perf: 0,
        },
    }
}

/// What a task's threads touch: the largest buffer its events sweep (`mem`'s
/// `mem_buffer_size`, a `memrun` buffer); nothing for run-only tasks.
fn working_set(t: &Task, mem_buffer_size: u64) -> u64 {
    let events = t.phases.iter().flat_map(|p| &p.events);
    let bytes = events.map(|e| match e {
        Event::Mem(_) => mem_buffer_size,
        Event::Memrun(m) => m.size,
        _ => 0,
    });
    bytes.max().unwrap_or(0)
}
