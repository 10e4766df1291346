//! The two hrtimers of each reservation (and of each CPU's fair server), as the classes arm
//! them and as they fire.

use super::server::ServerIdle;
use super::{Dl, DlTimer};
use crate::sched::class;
use crate::sched::hooks::Hooks;
use crate::sched::Sched;

impl Sched {
    /// Entity `se`'s hrtimer fires (stale unless `gen` matches): a task's, or a CPU's fair
    /// server's.
    pub(crate) fn dl_timer_fired<H: Hooks>(
        &mut self,
        se: u32,
        kind: DlTimer,
        gen: u32,
        h: &mut H,
    ) -> bool {
        let e = &mut self.dls[se as usize];
        if !e.timer_pending(kind, gen) {
            return false;
        }
        match e.task {
            Some(id) => self.task_timer_fired(id, se, kind, h),
            None => self.server_timer_fired(se as usize, kind, h),
        }
        true
    }

    /// Task `id`'s timer (its entity `se`).
    fn task_timer_fired<H: Hooks>(&mut self, id: u32, se: u32, kind: DlTimer, h: &mut H) {
        let cpu = self.tasks[id as usize].cpu;
        self.update_rq_clock(cpu, h.now());
        let t = &self.tasks[id as usize];
        match kind {
            DlTimer::Inactive => {
                let dead = t.state == crate::sched::task::TaskState::Dead;
                if self.on_rq(cpu, h, |rq, env| Dl::on(rq, env).inactive_timer(se, dead)) {
                    self.dl_release(id);
                }
            }
            DlTimer::Replenish => {
                let queued = t.queued();
                if self.on_rq(cpu, h, |rq, env| Dl::on(rq, env).dl_timer(se, queued)) {
                    self.wakeup_preempt(cpu, id, 0, h);
                    self.push_dl_tasks(cpu, h);
                }
            }
        }
    }

    /// The fair server's timer on `cpu` (its entity is the CPU's: `sched_class::fair_server`).
    fn server_timer_fired<H: Hooks>(&mut self, cpu: usize, kind: DlTimer, h: &mut H) {
        self.update_rq_clock(cpu, h.now());
        match kind {
            DlTimer::Inactive => {
                self.on_rq(cpu, h, |rq, env| {
                    let mut dl = Dl::on(rq, env);
                    let server = dl.server;
                    dl.inactive_timer(server, false)
                });
            }
            DlTimer::Replenish => {
                let preempt = self.on_rq(cpu, h, |rq, env| {
                    if !Dl::on(rq, env).server_timer_due() {
                        return false;
                    }
                    if env.feat.server_idle == ServerIdle::IdleWait {
                        class::update_curr(rq, env);
                    }
                    let mut dl = Dl::on(rq, env);
                    dl.server_timer() && dl.server_preempts()
                });
                if preempt {
                    self.resched_curr(cpu, h);
                } else if self.rqs[cpu].need_resched {
                    self.resched_asked(cpu, h);
                }
                self.push_dl_tasks(cpu, h);
            }
        }
    }
}
