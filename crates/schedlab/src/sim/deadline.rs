//! The engine's side of deadline.c: admission at sched_setattr, the two hrtimers of each
//! reservation, and global EDF's push and pull of tasks between runqueues.

use super::event::Ev;
use super::task::State;
use super::Sim;
use crate::sched::deadline::admission::DlBw;
use crate::sched::deadline::{cpudl, Dl, DlTimer, SchedDlEntity, FAIR_SERVER};
use crate::sched::rq::Rq;
use crate::trace::Record;

/// `__dl_overflow` then `__dl_add`: admit `bw` to the root domain (every CPU's extra_bw
/// shrinks by its share), or refuse it (false).
fn dl_add(rqs: &mut [Rq], dl_bw: &mut DlBw, bw: u64) -> bool {
    if dl_bw.overflow(0, bw) {
        return false;
    }
    let delta = dl_bw.add(bw);
    rqs.iter_mut().for_each(|rq| rq.dl.update_extra(delta));
    true
}

/// `dl_server_apply_params(init)` for every CPU: the kernel does it at the CPU's first fair
/// enqueue, which boot's kthreads make happen everywhere before any workload starts. A
/// server the admission test refuses stays disabled, as the kernel's.
pub(super) fn attach_fair_servers(rqs: &mut [Rq], dl_bw: &mut DlBw, runtime: u64, period: u64) {
    for cpu in 0..rqs.len() {
        let server = SchedDlEntity::fair_server(runtime, period);
        let bw = server.server_bw();
        if dl_add(rqs, dl_bw, bw) {
            rqs[cpu].fair_server = server;
            rqs[cpu].dl.this_bw += bw;
        }
    }
}

impl Sim {
    /// `sched_dl_overflow` at the thread's sched_setattr: admit its bandwidth to the root
    /// domain, or refuse it (false), as the kernel's EBUSY.
    pub(super) fn dl_admit(&mut self, id: u32) -> bool {
        dl_add(&mut self.rqs, &mut self.dl_bw, self.dls[id as usize].dl_bw)
    }

    /// `__dl_sub`: a dead task's bandwidth leaves the root domain.
    fn dl_release(&mut self, id: u32) {
        let bw = self.dls[id as usize].dl_bw;
        let delta = self.dl_bw.sub(bw);
        self.rqs.iter_mut().for_each(|rq| rq.dl.update_extra(delta));
    }

    /// After a class operation on `cpu`: queue the timers it armed, trace its records,
    /// release the bandwidth of the tasks it let go.
    pub(super) fn drain_dl(&mut self, cpu: usize) {
        let dl = &mut self.rqs[cpu].dl;
        if dl.timers.is_empty() && dl.notes.is_empty() && dl.released.is_empty() {
            return;
        }
        for i in 0..dl.timers.len() {
            let t = self.rqs[cpu].dl.timers[i];
            let (kind, gen) = (t.kind, t.gen);
            let ev = match t.task {
                FAIR_SERVER => Ev::DlServer {
                    cpu: cpu as u32,
                    kind,
                    gen,
                },
                task => Ev::Dl { task, kind, gen },
            };
            self.queue.push(t.at, self.now, ev);
        }
        self.rqs[cpu].dl.timers.clear();
        while let Some(id) = self.rqs[cpu].dl.released.pop() {
            self.dl_release(id);
        }
        for i in 0..self.rqs[cpu].dl.notes.len() {
            let note = self.rqs[cpu].dl.notes[i];
            self.emit(Record::Dl { cpu, note });
        }
        self.rqs[cpu].dl.notes.clear();
    }

    /// A reservation's hrtimer fires (stale unless `gen` matches).
    pub(super) fn dl_timer_fired(&mut self, id: u32, kind: DlTimer, gen: u32) -> bool {
        if !self.dls[id as usize].timer_pending(kind, gen) {
            return false;
        }
        let cpu = self.tasks[id as usize].cpu;
        self.update_rq_clock(cpu);
        let state = self.tasks[id as usize].state;
        match kind {
            DlTimer::Inactive => {
                let dead = state == State::Dead;
                if self.on_rq(cpu, |rq, env| Dl::on(rq, env).inactive_timer(id, dead)) {
                    self.dl_release(id);
                }
            }
            DlTimer::Replenish => {
                let queued = matches!(state, State::Runnable | State::Running);
                if self.on_rq(cpu, |rq, env| Dl::on(rq, env).dl_timer(id, queued)) {
                    self.wakeup_preempt(cpu, id, 0);
                    self.push_dl_tasks(cpu);
                }
            }
        }
        true
    }

    /// The fair server's hrtimer on `cpu` fires (stale unless `gen` matches).
    pub(super) fn dl_server_timer_fired(&mut self, cpu: usize, kind: DlTimer, gen: u32) -> bool {
        if !self.rqs[cpu].fair_server.timer_pending(kind, gen) {
            return false;
        }
        self.update_rq_clock(cpu);
        match kind {
            DlTimer::Inactive => {
                self.on_rq(cpu, |rq, env| {
                    Dl::on(rq, env).inactive_timer(FAIR_SERVER, false)
                });
            }
            DlTimer::Replenish => {
                let preempt = self.on_rq(cpu, |rq, env| {
                    let mut dl = Dl::on(rq, env);
                    dl.server_timer() && dl.server_preempts()
                });
                if preempt {
                    self.schedule(cpu);
                }
                self.push_dl_tasks(cpu);
            }
        }
        true
    }

    /// `task_woken_dl`: a woken deadline task that will not run here is pushed away now.
    pub(super) fn task_woken_dl(&mut self, cpu: usize, id: u32) {
        if self.rqs[cpu].curr != Some(id) && self.dls[id as usize].migratable {
            self.push_dl_tasks(cpu);
        }
    }

    /// `push_dl_tasks`.
    pub(super) fn push_dl_tasks(&mut self, cpu: usize) {
        while self.push_dl_task(cpu) {}
    }

    /// `push_dl_task`: move the earliest pushable task of an overloaded `cpu` to a CPU
    /// where it runs at once; true if one moved.
    fn push_dl_task(&mut self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        if !cpudl::overloaded(rq, &self.dls) {
            return false;
        }
        let Some(next) = cpudl::earliest_pushable(rq, &self.dls, |_| true) else {
            return false;
        };
        let next_dl = &self.dls[next as usize];
        if let Some(c) = rq.curr {
            let curr = &self.dls[c as usize];
            if curr.dl_runtime != 0 && next_dl.deadline < curr.deadline && curr.migratable {
                self.schedule(cpu);
                return false;
            }
        }
        let allowed = &self.tasks[next as usize].allowed;
        let Some(later) = cpudl::find_later_rq(&self.rqs, next_dl, allowed, cpu, self.asym)
            .filter(|&l| l != cpu && cpudl::is_earliest(&self.rqs[l], next_dl))
        else {
            return false;
        };
        self.move_queued_task(next, cpu, later);
        self.schedule(later);
        true
    }

    /// `pull_dl_task`: `cpu` lost a deadline task; take from an overloaded CPU the earliest
    /// pushable task that would run here at once and not have run there already.
    pub(super) fn pull_dl_task(&mut self, this: usize) {
        let n = self.rqs.len();
        for src in (1..n).map(|i| (this + i) % n) {
            if !cpudl::overloaded(&self.rqs[src], &self.dls) {
                continue;
            }
            let allowed = |p: u32| self.tasks[p as usize].allowed[this];
            let Some(p) = cpudl::earliest_pushable(&self.rqs[src], &self.dls, allowed) else {
                continue;
            };
            let pd = self.dls[p as usize].deadline;
            let src_curr = self.rqs[src]
                .curr
                .map_or(0, |c| self.dls[c as usize].deadline);
            if cpudl::is_earliest(&self.rqs[this], &self.dls[p as usize]) && pd >= src_curr {
                self.move_queued_task(p, src, this);
            }
        }
    }
}

#[cfg(test)]
mod tests;
