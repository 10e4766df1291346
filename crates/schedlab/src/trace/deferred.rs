//! Tracing off the event loop: a writer's formatting and encoding run on a thread of their
//! own. The run copies each event's values (its numbers, and its strings into one buffer)
//! into a batch; full batches go to the thread, which renders them in order, and come back
//! empty to be filled again. The output is the same whatever the threads' timing. At most
//! `PENDING` batches wait for the thread: where the run outpaces it, the run waits.

use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::sched::task::SchedTask;
use crate::time::Ns;
use crate::tracepoint::{with_values, Context, TraceEvent, Tracepoint, Val};

/// Events in a batch.
const BATCH: usize = 4096;
/// Batches handed over and not yet rendered, at most.
const PENDING: usize = 4;

/// What a writer does with an event's values, on the writing thread.
pub trait Render: Send + 'static {
    fn event(&mut self, now: Ns, ev: TraceEvent, ctx: Context, vals: &[Val]) -> io::Result<()>;
}

/// A value kept: a number, or a string's place in the batch's text.
#[derive(Clone, Copy)]
enum Kept {
    I(i64),
    S(u32, u32),
}

/// An event kept: its values are `vals[from..to]` of the batch.
struct Event {
    now: Ns,
    ev: TraceEvent,
    comm: (u32, u32),
    pid: u32,
    cpu: u32,
    vals: (u32, u32),
}

/// Events with their values and strings.
#[derive(Default)]
struct Batch {
    events: Vec<Event>,
    vals: Vec<Kept>,
    text: String,
}

impl Batch {
    fn keep(&mut self, s: &str) -> (u32, u32) {
        let from = self.text.len() as u32;
        self.text.push_str(s);
        (from, self.text.len() as u32)
    }

    fn push(&mut self, now: Ns, ev: TraceEvent, (comm, pid, cpu): Context, vals: &[Val]) {
        let comm = self.keep(comm);
        let from = self.vals.len() as u32;
        for v in vals {
            let kept = match *v {
                Val::I(i) => Kept::I(i),
                Val::S(s) => {
                    let (a, b) = self.keep(s);
                    Kept::S(a, b)
                }
            };
            self.vals.push(kept);
        }
        let vals = (from, self.vals.len() as u32);
        let cpu = cpu as u32;
        self.events.push(Event {
            now,
            ev,
            comm,
            pid,
            cpu,
            vals,
        });
    }

    /// Hand each event to `r`, in order.
    fn render(&self, r: &mut impl Render) -> io::Result<()> {
        let text = |(a, b): (u32, u32)| &self.text[a as usize..b as usize];
        let mut vals = Vec::with_capacity(16);
        for e in &self.events {
            vals.clear();
            let kept = &self.vals[e.vals.0 as usize..e.vals.1 as usize];
            vals.extend(kept.iter().map(|k| match *k {
                Kept::I(i) => Val::I(i),
                Kept::S(a, b) => Val::S(text((a, b))),
            }));
            r.event(e.now, e.ev, (text(e.comm), e.pid, e.cpu as usize), &vals)?;
        }
        Ok(())
    }

    fn clear(&mut self) {
        self.events.clear();
        self.vals.clear();
        self.text.clear();
    }
}

/// A renderer at work on its own thread.
pub struct Deferred<R: Render> {
    batch: Batch,
    to: Option<SyncSender<Batch>>,
    /// Rendered batches, empty, for reuse.
    back: Receiver<Batch>,
    worker: Option<JoinHandle<io::Result<R>>>,
}

impl<R: Render> Deferred<R> {
    /// Start `r` on a thread named `name`.
    pub fn start(name: &str, mut r: R) -> io::Result<Deferred<R>> {
        let (to, from) = sync_channel::<Batch>(PENDING);
        let (give_back, back) = sync_channel::<Batch>(PENDING + 2);
        let worker = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for mut b in from {
                    b.render(&mut r)?;
                    b.clear();
                    let _ = give_back.try_send(b);
                }
                Ok(r)
            })?;
        Ok(Deferred {
            batch: Batch::default(),
            to: Some(to),
            back,
            worker: Some(worker),
        })
    }

    /// Keep `tp`'s values (its tasks in `tasks`, the groups' paths in `paths`, the root
    /// domain's span as `span`) for the thread.
    pub fn record(
        &mut self,
        now: Ns,
        tp: &Tracepoint,
        tasks: &[SchedTask],
        paths: &[String],
        span: &str,
    ) -> io::Result<()> {
        let b = &mut self.batch;
        with_values(tp, tasks, paths, span, |ev, ctx, vals| {
            b.push(now, ev, ctx, vals)
        });
        if self.batch.events.len() == BATCH {
            self.hand_over()?;
        }
        Ok(())
    }

    /// The batch to the thread, a rendered one (or a new one) in its place.
    fn hand_over(&mut self) -> io::Result<()> {
        let next = self.back.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut self.batch, next);
        // Gone: it stopped on an error, already returned.
        let Some(to) = &self.to else {
            return Err(io::Error::other("the trace's writing thread stopped"));
        };
        if to.send(full).is_err() {
            // The thread stopped on an error: say it.
            return Err(self
                .join()
                .err()
                .unwrap_or_else(|| io::Error::other("stopped")));
        }
        Ok(())
    }

    /// Stop the thread; its renderer back, or its error.
    fn join(&mut self) -> io::Result<R> {
        self.to = None;
        let stopped = || io::Error::other("the trace's writing thread failed");
        let worker = self.worker.take().ok_or_else(stopped)?;
        worker.join().map_err(|_| stopped())?
    }

    /// Every event rendered: the renderer back.
    pub fn finish(&mut self) -> io::Result<R> {
        if !self.batch.events.is_empty() {
            self.hand_over()?;
        }
        self.join()
    }
}

impl<R: Render> Drop for Deferred<R> {
    /// An unfinished run (an error, an interruption): the thread stops and lets go of the
    /// output before the output is removed.
    fn drop(&mut self) {
        if self.worker.is_some() {
            let _ = self.join();
        }
    }
}
