//! The two hrtimers of each reservation (and of each CPU's fair server), as the classes arm
//! them and as they fire.

use super::{Dl, DlTimer, FAIR_SERVER};
use crate::sched::hooks::Hooks;
use crate::sched::Sched;

impl Sched {
    /// A reservation's hrtimer fires (stale unless `gen` matches).
    pub(crate) fn dl_timer_fired<H: Hooks>(
        &mut self,
        id: u32,
        kind: DlTimer,
        gen: u32,
        h: &mut H,
    ) -> bool {
        if !self.dls[id as usize].timer_pending(kind, gen) {
            return false;
        }
        let cpu = self.tasks[id as usize].cpu;
        self.update_rq_clock(cpu, h.now());
        let t = &self.tasks[id as usize];
        match kind {
            DlTimer::Inactive => {
                let dead = t.state == crate::sched::task::TaskState::Dead;
                if self.on_rq(cpu, h, |rq, env| Dl::on(rq, env).inactive_timer(id, dead)) {
                    self.dl_release(id);
                }
            }
            DlTimer::Replenish => {
                let queued = t.queued();
                if self.on_rq(cpu, h, |rq, env| Dl::on(rq, env).dl_timer(id, queued)) {
                    self.wakeup_preempt(cpu, id, 0, h);
                    self.push_dl_tasks(cpu, h);
                }
            }
        }
        true
    }

    /// The fair server's hrtimer on `cpu` fires (stale unless `gen` matches).
    pub(crate) fn dl_server_timer_fired<H: Hooks>(
        &mut self,
        cpu: usize,
        kind: DlTimer,
        gen: u32,
        h: &mut H,
    ) -> bool {
        if !self.rqs[cpu].fair_server.timer_pending(kind, gen) {
            return false;
        }
        self.update_rq_clock(cpu, h.now());
        match kind {
            DlTimer::Inactive => {
                self.on_rq(cpu, h, |rq, env| {
                    Dl::on(rq, env).inactive_timer(FAIR_SERVER, false)
                });
            }
            DlTimer::Replenish => {
                let preempt = self.on_rq(cpu, h, |rq, env| {
                    let mut dl = Dl::on(rq, env);
                    dl.server_timer() && dl.server_preempts()
                });
                if preempt {
                    self.resched_curr(cpu, h);
                }
                self.push_dl_tasks(cpu, h);
            }
        }
        true
    }
}
