//! The idle class (kernel/sched/idle.c): no queue, just what a CPU runs when no class has a
//! task.

use super::class::Env;
use super::deadline::server::ServerIdle;
use super::deadline::Dl;
use super::fair::balance::{update_rq_avg_idle, AvgIdle};
use super::rq::Rq;

/// `set_next_task_idle`: the CPU goes idle, so clock_pelt may have lost idle time
/// (`update_idle_rq_clock_pelt`).
pub fn set_next_task_idle(rq: &mut Rq, env: &mut Env) {
    let util_sum = env
        .cfs()
        .avg
        .util_sum
        .wrapping_add(rq.avg_rt.util_sum)
        .wrapping_add(rq.avg_dl.util_sum);
    rq.clock.update_idle(util_sum);
    rq.idle_exec_start = rq.clock.clock_task;
}

/// `put_prev_task_idle`: the idle time counts against the fair server's budget, and (7.0+)
/// it is `avg_idle`'s sample.
pub fn put_prev_task_idle(rq: &mut Rq, env: &mut Env) {
    update_curr_idle(rq, env);
    if env.feat.avg_idle == AvgIdle::IdleExit {
        update_rq_avg_idle(rq, env.feat.newidle_gate);
    }
}

/// `update_curr_idle` (6.19+), or `dl_server_update_idle_time` before it: the idle time
/// since the last charge goes to the fair server. Simplified: an idle CPU has no tick
/// (NOHZ idle), so `task_tick_idle`'s charge never comes.
pub fn update_curr_idle(rq: &mut Rq, env: &mut Env) {
    let start = rq.idle_exec_start;
    match env.feat.server_idle {
        ServerIdle::Clamp => {
            rq.idle_exec_start = Dl::on(rq, env).server_update_idle_time(start);
        }
        ServerIdle::IdleWait => {
            let now = rq.clock.clock_task;
            if now > start {
                rq.idle_exec_start = now;
                Dl::on(rq, env).server_update_idle(now - start);
            }
        }
    }
}
