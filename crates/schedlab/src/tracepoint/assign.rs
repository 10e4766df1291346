//! What each tracepoint records (`TP_fast_assign`): its values in its event's field order,
//! the one mapping from which trace.dat's records, the text trace's fields and Perfetto's
//! messages are written, and the context it fires in.

use std::borrow::Cow;

use super::{DlNote, Note, PrevState, TraceEvent, Tracepoint, Val, RTAPP_MAIN_PID};
use crate::sched::fair::group::TgId;
use crate::sched::fair::NO_TASK;
use crate::sched::task::SchedTask;

/// A record's context: the current task's comm and pid, and the CPU that records it.
pub type Context<'a> = (&'a str, u32, usize);

/// Where `tracing_mark_write` is in the kallsyms a trace.dat carries: the `ip` of every
/// `print` (trace-cmd resolves it to the name, as LISA expects).
pub const TRACING_MARK_WRITE: u64 = 0xffff_ffff_8120_0000;

/// The kernel symbol at `addr` (`%ps`): the one a trace names.
pub fn ksym(addr: u64) -> &'static str {
    debug_assert_eq!(addr, TRACING_MARK_WRITE);
    "tracing_mark_write"
}

/// The values of `tp` (its tasks in `tasks`, task groups' paths in `paths`, the root
/// domain's span as `span`), handed to `f` with its event and context (`trace::context`).
pub fn with_values<R>(
    tp: &Tracepoint,
    tasks: &[SchedTask],
    paths: &[String],
    span: &str,
    f: impl FnOnce(TraceEvent, Context, &[Val]) -> R,
) -> R {
    use Val::{I, S};
    let ctx = context(tp, tasks);
    let (ccomm, cpid, cpu) = ctx;
    let f = |ev, vals: &[Val]| f(ev, ctx, vals);
    let ev = tp.event();
    let t = |id: u32| &tasks[id as usize];
    let task = |id: u32| (t(id).kcomm(), t(id).pid as i64, t(id).prio() as i64);
    let c = cpu as i64;
    match tp {
        Tracepoint::Switch {
            prev,
            prev_state,
            next,
            ..
        } => {
            let side = |x: Option<u32>| match x {
                Some(i) => (Cow::from(t(i).kcomm()), task(i).1, task(i).2),
                None => (swapper("<idle>", cpu), 0, 120),
            };
            let ((pc, pp, pprio), (nc, np, nprio)) = (side(*prev), side(*next));
            let state = switch_state_value(*prev, *prev_state);
            f(
                ev,
                &[S(&pc), I(pp), I(pprio), I(state), S(&nc), I(np), I(nprio)],
            )
        }
        Tracepoint::Waking {
            task: id, target, ..
        }
        | Tracepoint::Wakeup {
            task: id, target, ..
        }
        | Tracepoint::WakeupNew {
            task: id, target, ..
        } => {
            let (comm, pid, prio) = task(*id);
            f(ev, &[S(comm), I(pid), I(prio), I(*target as i64)])
        }
        Tracepoint::Migrate {
            task: id, from, to, ..
        } => {
            let (comm, pid, prio) = task(*id);
            f(
                ev,
                &[S(comm), I(pid), I(prio), I(*from as i64), I(*to as i64)],
            )
        }
        Tracepoint::Fork { child, .. } => f(
            ev,
            &[S(ccomm), I(cpid as i64), S(ccomm), I(t(*child).pid as i64)],
        ),
        Tracepoint::Rename { task: id, .. } => f(
            ev,
            &[I(t(*id).pid as i64), S("rt-app"), S(t(*id).kcomm()), I(0)],
        ),
        Tracepoint::Exit { task: id, .. } => {
            let (comm, pid, prio) = task(*id);
            f(ev, &[S(comm), I(pid), I(prio)])
        }
        Tracepoint::PiSetprio {
            task: id,
            oldprio,
            newprio,
            ..
        } => {
            let (comm, pid, _) = task(*id);
            f(
                ev,
                &[S(comm), I(pid), I(*oldprio as i64), I(*newprio as i64)],
            )
        }
        Tracepoint::CpuIdle { state, .. } => f(ev, &[I(*state as i64), I(c)]),
        Tracepoint::CpuFrequency { khz, .. } => f(ev, &[I(*khz as i64), I(c)]),
        Tracepoint::CpuCapacity {
            capacity,
            orig,
            curr,
            ..
        } => f(
            ev,
            &[I(c), I(*capacity as i64), I(*orig as i64), I(*curr as i64)],
        ),
        Tracepoint::Fair { note, .. } => fair(ev, c, note, tasks, paths, f),
        Tracepoint::Dl { task: id, note, .. } => {
            let (comm, pid, _) = task(*id);
            match *note {
                DlNote::Throttle { runtime } => f(ev, &[S(comm), I(pid), I(c), I(runtime)]),
                DlNote::Replenish { runtime, deadline } => {
                    f(ev, &[S(comm), I(pid), I(c), I(runtime), I(deadline as i64)])
                }
                DlNote::Miss { deadline } => f(ev, &[S(comm), I(pid), I(c), I(deadline as i64)]),
            }
        }
        Tracepoint::Overutilized { overutilized, .. } => f(ev, &[I(*overutilized as i64), S(span)]),
        Tracepoint::Print { text, .. } => f(ev, &[I(TRACING_MARK_WRITE as i64), S(text)]),
    }
}

/// The LISA module's PELT and util_est events (sched_tp's layouts) on CPU `c`.
fn fair<R>(
    ev: TraceEvent,
    c: i64,
    note: &Note,
    tasks: &[SchedTask],
    paths: &[String],
    f: impl FnOnce(TraceEvent, &[Val]) -> R,
) -> R {
    use Val::{I, S};
    match *note {
        Note::PeltSe {
            task,
            path,
            load,
            runnable,
            util,
            update_time,
        } => {
            let (path, comm, pid) = pelt_se_who(task, path, tasks, paths);
            let [t, l, r, u, cpu] = pelt([update_time, load, runnable, util], c);
            f(ev, &[t, l, r, u, cpu, I(pid), S(path), S(comm)])
        }
        Note::PeltCfs {
            path,
            load,
            runnable,
            util,
            update_time,
        } => {
            let [t, l, r, u, cpu] = pelt([update_time, load, runnable, util], c);
            f(ev, &[t, l, r, u, cpu, S(&paths[path as usize])])
        }
        Note::UtilEstSe {
            task,
            enqueued,
            ewma,
            util,
        } => {
            let p = &tasks[task as usize];
            f(
                ev,
                &[
                    I(util as i64),
                    I(enqueued as i64),
                    I(ewma as i64),
                    I(c),
                    I(p.pid as i64),
                    S("(null)"),
                    S(p.kcomm()),
                ],
            )
        }
        Note::UtilEstCfs { enqueued, util } => f(
            ev,
            &[I(util as i64), I(enqueued as i64), I(0), I(c), S("/")],
        ),
        Note::PeltRq {
            load,
            runnable,
            util,
            update_time,
            ..
        } => f(ev, &pelt([update_time, load, runnable, util], c)),
    }
}

/// sched_tp's PELT layouts start alike: update_time, load, runnable, util, then the CPU.
fn pelt<'a>([update_time, load, runnable, util]: [u64; 4], cpu: i64) -> [Val<'a>; 5] {
    let v = |x: u64| Val::I(x as i64);
    [v(update_time), v(load), v(runnable), v(util), Val::I(cpu)]
}

/// The context a tracepoint fires in, as a trace's header shows it: the current task's comm
/// and pid (the idle task's "<idle>", 0; rt-app's main thread "rt-app", 1, for the threads
/// it forks at start), and the CPU whose buffer records it.
fn context<'a>(tp: &Tracepoint, tasks: &'a [SchedTask]) -> (&'a str, u32, usize) {
    let who = |task: Option<u32>| match task {
        Some(t) => (tasks[t as usize].kcomm(), tasks[t as usize].pid),
        None => ("<idle>", 0),
    };
    let ((comm, pid), cpu) = match *tp {
        Tracepoint::Switch { cpu, prev, .. } => (who(prev), cpu),
        Tracepoint::Waking { curr, cpu, .. } => (who(curr), cpu),
        Tracepoint::Wakeup { curr, cpu, .. } | Tracepoint::Migrate { curr, cpu, .. } => {
            (who(curr), cpu)
        }
        Tracepoint::Fork {
            parent: None, cpu, ..
        }
        | Tracepoint::WakeupNew {
            parent: None, cpu, ..
        } => (("rt-app", RTAPP_MAIN_PID), cpu),
        Tracepoint::Fork { parent, cpu, .. } | Tracepoint::WakeupNew { parent, cpu, .. } => {
            (who(parent), cpu)
        }
        Tracepoint::Rename { task, cpu }
        | Tracepoint::Exit { task, cpu }
        | Tracepoint::PiSetprio { task, cpu, .. }
        | Tracepoint::Dl { task, cpu, .. } => (who(Some(task)), cpu),
        Tracepoint::Print {
            task: None, cpu, ..
        } => (("rt-app", RTAPP_MAIN_PID), cpu),
        Tracepoint::Print { task, cpu, .. } => (who(task), cpu),
        Tracepoint::CpuIdle { cpu, .. }
        | Tracepoint::CpuFrequency { cpu, .. }
        | Tracepoint::CpuCapacity { cpu, .. } => (who(None), cpu),
        Tracepoint::Fair { cpu, task, .. } | Tracepoint::Overutilized { cpu, task, .. } => {
            (who(task), cpu)
        }
    };
    (comm, pid, cpu)
}

/// The idle task's comm in `sched_switch` is `swapper/N`.
fn swapper(comm: &str, cpu: usize) -> std::borrow::Cow<'_, str> {
    if comm == "<idle>" {
        format!("swapper/{cpu}").into()
    } else {
        comm.into()
    }
}

/// `__trace_sched_switch_state`'s value, as trace.dat and Perfetto record `prev_state`: a
/// preempted user task calls `schedule()` running (0, "R"); a sleeper is
/// `TASK_INTERRUPTIBLE` (1); an exiting thread, reaped at once, `EXIT_DEAD` (0x10).
fn switch_state_value(prev: Option<u32>, s: PrevState) -> i64 {
    match (prev, s) {
        (None, _) | (_, PrevState::Runnable) => 0,
        (_, PrevState::Sleeping) => 0x1,
        (_, PrevState::Dead) => 0x10,
    }
}

/// Who a `sched_pelt_se` is about, as the LISA module prints it: a task's path is "(null)"
/// with its comm and pid; a group entity's its cgroup path (of `paths`) with comm "(null)"
/// and pid −1.
fn pelt_se_who<'a>(
    task: u32,
    path: TgId,
    tasks: &'a [SchedTask],
    paths: &'a [String],
) -> (&'a str, &'a str, i64) {
    match task {
        NO_TASK => (paths[path as usize].as_str(), "(null)", -1),
        t => (
            "(null)",
            tasks[t as usize].kcomm(),
            tasks[t as usize].pid as i64,
        ),
    }
}
