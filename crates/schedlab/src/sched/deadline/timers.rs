//! The two hrtimers of each reservation (and of each CPU's fair server), as the classes arm
//! them and as they fire.

use super::{Dl, DlTimer, FAIR_SERVER};
use crate::sched::hooks::{Hooks, SchedTimer, Tracepoint};
use crate::sched::Sched;

impl Sched {
    /// After a class operation on `cpu`: arm the timers it asked for, release the
    /// bandwidth of the tasks it let go, trace its records.
    pub(crate) fn drain_dl<H: Hooks>(&mut self, cpu: usize, h: &mut H) {
        let dl = &mut self.rqs[cpu].dl;
        if dl.timers.is_empty() && dl.notes.is_empty() && dl.released.is_empty() {
            return;
        }
        for i in 0..dl.timers.len() {
            let t = self.rqs[cpu].dl.timers[i];
            let (kind, gen) = (t.kind, t.gen);
            let timer = match t.task {
                FAIR_SERVER => SchedTimer::DlServer {
                    cpu: cpu as u32,
                    kind,
                    gen,
                },
                task => SchedTimer::Dl { task, kind, gen },
            };
            h.arm(t.at, timer);
        }
        self.rqs[cpu].dl.timers.clear();
        while let Some(id) = self.rqs[cpu].dl.released.pop() {
            self.dl_release(id);
        }
        for i in 0..self.rqs[cpu].dl.notes.len() {
            let note = self.rqs[cpu].dl.notes[i];
            h.trace(self, Tracepoint::Dl { cpu, note });
        }
        self.rqs[cpu].dl.notes.clear();
    }

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
