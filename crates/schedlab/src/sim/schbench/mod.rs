//! schbench (schbench.c, Chris Mason's scheduler benchmark): message threads wake their
//! workers through futexes; each worker sleeps, multiplies matrices under its CPU's lock and
//! counts its wakeup and request latencies in fio's log-linear histogram; the main thread
//! samples the requests per second each second and reports (`-p`, a pipe test: no work; the
//! worker and the message thread each write the worker's transfer buffer before they post
//! the other, and the last report gives the transfers a second). This file is the state those
//! threads share (the process's memory: futex words, lists, per-CPU locks, statistics) and
//! what each of their steps (`SchOp`) does to it.

mod auto_rps;

use super::engine::{Action, Engine};
use super::thread::Step;
use crate::sched::ops::Op as SchedOp;
use crate::sched::Sched;
use crate::time::Ns;
use crate::workload::program::{SchOp, SchbenchShape};

/// `PLAT_BITS`: each power-of-two group of the histogram has 2^8 buckets.
const PLAT_BITS: u32 = 8;
const PLAT_VAL: u32 = 1 << PLAT_BITS;
/// `PLAT_NR`: 19 groups.
pub const PLAT_NR: usize = 19 * PLAT_VAL as usize;
/// `plist`: the percentiles computed (a report prints some of them).
pub const PLIST: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];
/// `batch`: an RPS message thread queues no more on a worker with this many pending.
const RPS_BATCH: u64 = 128;
/// ... and sleeps 100 µs instead (`usleep(100)`).
const RPS_BACKOFF_NS: Ns = 100_000;
/// How often a worker spinning on a CPU's lock tries it again. Simplified: the real loop
/// (`pthread_mutex_trylock` and a `pause`) tries every few tens of ns.
const SPIN_NS: Ns = 1_000;
const USEC_PER_SEC: u64 = 1_000_000;

/// `plat_val_to_idx`: a value's bucket, exact below 512, then 256 buckets per power of two.
pub fn plat_val_to_idx(val: u32) -> usize {
    let msb = if val == 0 {
        0
    } else {
        31 - val.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = (error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// `plat_idx_to_val`: the middle of a bucket's range, as schbench computes it
/// (`base + (k + 0.5) · 2^error_bits`, exact in integers since error_bits ≥ 1).
pub fn plat_idx_to_val(idx: usize) -> u32 {
    let idx = idx as u32;
    if idx < PLAT_VAL << 1 {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1 << (error_bits + PLAT_BITS);
    let k = idx % PLAT_VAL;
    base + (k << error_bits) + (1 << (error_bits - 1))
}

/// `struct stats`: latencies (µs) or RPS samples in fio's histogram.
#[derive(Debug, Clone)]
pub struct Plat {
    plat: Vec<u32>,
    pub nr_samples: u64,
    pub max: u32,
    /// 0 until a sample that is not 0 (`add_lat` takes the next sample when it is 0).
    pub min: u32,
}

/// A histogram's figures as schbench prints them: each `PLIST` percentile's value and the
/// samples since the one before (`calc_percentiles`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    pub samples: u64,
    pub min: u32,
    pub max: u32,
    pub values: [u32; 5],
    pub counts: [u64; 5],
}

impl Default for Plat {
    fn default() -> Plat {
        Plat {
            plat: vec![0; PLAT_NR],
            nr_samples: 0,
            max: 0,
            min: 0,
        }
    }
}

impl Plat {
    /// `add_lat`.
    pub fn add(&mut self, us: u32) {
        self.max = self.max.max(us);
        if self.min == 0 || us < self.min {
            self.min = us;
        }
        self.plat[plat_val_to_idx(us)] += 1;
        self.nr_samples += 1;
    }

    /// `combine_stats`: fold `other` in.
    pub fn combine(&mut self, other: &Plat) {
        for (d, s) in self.plat.iter_mut().zip(&other.plat) {
            *d += s;
        }
        self.nr_samples += other.nr_samples;
        self.max = self.max.max(other.max);
        if self.min == 0 || other.min < self.min {
            self.min = other.min;
        }
    }

    /// `memset(stats, 0)`.
    pub fn reset(&mut self) {
        self.plat.fill(0);
        (self.nr_samples, self.max, self.min) = (0, 0, 0);
    }

    /// `calc_percentiles`: walk the buckets until each percentile's share of the samples
    /// (compared in doubles, as schbench does) is reached.
    pub fn figures(&self) -> Figures {
        let nr = self.nr_samples as f64;
        let (mut values, mut cum) = ([0; 5], [0u64; 5]);
        let (mut sum, mut j) = (0u64, 0);
        'buckets: for (i, &n) in self.plat.iter().enumerate() {
            sum += n as u64;
            while sum as f64 >= PLIST[j] / 100.0 * nr {
                (values[j], cum[j]) = (plat_idx_to_val(i), sum);
                if j == PLIST.len() - 1 {
                    break 'buckets;
                }
                j += 1;
            }
        }
        let mut counts = cum;
        for i in 1..counts.len() {
            counts[i] = cum[i] - cum[i - 1];
        }
        Figures {
            samples: self.nr_samples,
            min: self.min,
            max: self.max,
            values,
            counts,
        }
    }
}

/// One of schbench's reports: each interval's (`sleep_for_runtime`) or the last (`main`).
#[derive(Debug, Clone)]
pub struct Report {
    /// The seconds it names: those run so far, or `-r` for the last.
    pub runtime_s: u64,
    pub last: bool,
    pub wakeup: Figures,
    pub request: Figures,
    pub rps: Figures,
    /// The round's RPS ("current rps"), or for the last report the requests over `-r`
    /// ("average rps").
    pub rps_now: f64,
    /// Requests done so far, and the workers' run times summed (µs: `loop_runtime`, each
    /// from its start to its last request).
    pub loops: u64,
    pub worker_runtime_us: u64,
    /// `requests_per_sec · message_threads` ("final rps goal was", under `-A`).
    pub rps_goal: u64,
    /// "sched delay": the threads' mean `run_delay / pcount` (µs) from /proc/TID/schedstat;
    /// 0 once they are joined (the files are gone), as in the last report.
    pub delay_message_us: u64,
    pub delay_worker_us: u64,
}

/// A futex word as schbench uses one (`FUTEX_RUNNING`: posted), the thread in `FUTEX_WAIT`
/// on it, and whether its owner is inside `fwait` (it resumes there when woken).
#[derive(Debug, Clone, Default)]
struct Futex {
    running: bool,
    waiter: Option<u32>,
    in_wait: bool,
}

/// Whose futex: a message thread's or a worker's, by index.
#[derive(Debug, Clone, Copy)]
enum Who {
    Msg(usize),
    Worker(usize),
}

impl Futex {
    /// `fpost`: BLOCKED → RUNNING; the thread to wake (`FUTEX_WAKE`), if one waits.
    fn post(&mut self) -> Option<u32> {
        if self.running {
            return None;
        }
        self.running = true;
        self.waiter.take()
    }

    /// `fwait`'s test: RUNNING → BLOCKED and on, else thread `id` waits.
    fn try_wait(&mut self, id: u32) -> bool {
        if self.running {
            self.running = false;
            return true;
        }
        self.waiter = Some(id);
        false
    }
}

#[derive(Debug, Clone, Default)]
struct Msg {
    futex: Futex,
    tid: Option<u32>,
    /// Its `gettimeofday` (µs) before the futex calls whose time it is spending.
    stamp: Option<u64>,
    /// The workers on its list (`xlist_add` order; `xlist_splice` hands them back newest
    /// first).
    list: Vec<u32>,
    /// RPS mode: the second's next request (1-based; 0: a new second), when the second
    /// began (µs), requests queued so far (`cur_tid`), and the sleep chosen.
    burst: u32,
    second_start: u64,
    cur_tid: u64,
    nap: Ns,
    /// A pipe test's `xlist_wake_all`, one worker at a time: the workers still to wake
    /// (the last the next), whether the next one's buffer is written, and whether this
    /// pass is the one after `stopping`.
    waking: Vec<u32>,
    passing: bool,
    written: bool,
    last_pass: bool,
}

#[derive(Debug, Clone, Default)]
struct Worker {
    futex: Futex,
    tid: Option<u32>,
    /// `gettimeofday`s (µs): when it was woken (or began to wait), when its request began.
    wake_time: u64,
    work_start: u64,
    /// RPS mode: requests queued on it (`pending` as the message thread counts them, the
    /// list not yet taken) and those taken and not yet done.
    pending: u64,
    queued: u64,
    batch: u64,
    /// The CPU whose lock it spins on, and the one it holds.
    spin_cpu: Option<usize>,
    held: Option<usize>,
    /// A pipe test: its request's write of its buffer is done.
    written: bool,
    /// `msg_and_wait`: its post of the message thread made, preempted at the `FUTEX_WAKE`'s
    /// return; its `fwait` comes when it runs again.
    posted: bool,
    /// Its `gettimeofday` as it started (µs), and its `runtime` from then (µs).
    start: Option<u64>,
    runtime: u64,
    wakeup: Plat,
    request: Plat,
    loops: u64,
}

/// `sleep_for_runtime`'s clocks (µs) and counters.
#[derive(Debug, Clone, Default)]
struct Main {
    start: Option<u64>,
    last_calc: u64,
    last_rps_calc: u64,
    zero_time: u64,
    last_loops: u64,
    warmup_done: bool,
}

/// The memory schbench's threads share.
#[derive(Debug, Clone)]
pub struct Schbench {
    shape: SchbenchShape,
    stopping: bool,
    msgs: Vec<Msg>,
    workers: Vec<Worker>,
    /// `per_cpu_locks`: held?
    locks: Vec<bool>,
    rps: Plat,
    /// `requests_per_sec` (per message thread), which `-A` rescales each second.
    rps_goal: u32,
    auto: auto_rps::AutoRps,
    main: Main,
    pub reports: Vec<Report>,
}

/// `gettimeofday` at `now`, in µs.
fn tv(now: Ns) -> u64 {
    now / 1000
}

impl Schbench {
    pub fn new(shape: &SchbenchShape, nr_cpus: usize) -> Schbench {
        let n = (shape.message_threads * shape.workers) as usize;
        Schbench {
            shape: *shape,
            stopping: false,
            msgs: vec![Msg::default(); shape.message_threads as usize],
            workers: vec![Worker::default(); n],
            locks: vec![false; nr_cpus],
            rps: Plat::default(),
            rps_goal: shape.rps,
            auto: auto_rps::AutoRps::default(),
            main: Main::default(),
            reports: Vec::new(),
        }
    }

    fn futex(&mut self, who: Who) -> &mut Futex {
        match who {
            Who::Msg(m) => &mut self.msgs[m].futex,
            Who::Worker(w) => &mut self.workers[w].futex,
        }
    }

    fn msg_of(&self, w: u32) -> usize {
        (w / self.shape.workers) as usize
    }

    fn loops(&self) -> u64 {
        self.workers.iter().map(|w| w.loops).sum()
    }

    /// `reset_thread_stats`.
    fn reset(&mut self) {
        self.rps.reset();
        for w in &mut self.workers {
            w.wakeup.reset();
            w.request.reset();
        }
    }

    /// `combine_message_thread_stats` into a report.
    fn report(&self, runtime_s: u64, last: bool, rps_now: f64, delays: (u64, u64)) -> Report {
        let (mut wakeup, mut request) = (Plat::default(), Plat::default());
        for w in &self.workers {
            wakeup.combine(&w.wakeup);
            request.combine(&w.request);
        }
        Report {
            runtime_s,
            last,
            wakeup: wakeup.figures(),
            request: request.figures(),
            rps: self.rps.figures(),
            rps_now,
            loops: self.loops(),
            worker_runtime_us: self.workers.iter().map(|w| w.runtime).sum(),
            rps_goal: self.rps_goal as u64 * self.shape.message_threads as u64,
            delay_message_us: delays.0,
            delay_worker_us: delays.1,
        }
    }
}

impl Engine {
    fn sb(&mut self) -> &mut Schbench {
        self.res.schbench.as_mut().expect("a schbench workload")
    }

    /// A step of a schbench thread.
    pub(super) fn schbench(&mut self, s: &mut Sched, id: u32, op: SchOp) -> Step {
        let now_us = tv(self.now);
        match op {
            SchOp::Tick => self.sch_tick(s, id),
            SchOp::PostMessage(m) => self.sch_post(s, id, Who::Msg(m as usize)),
            SchOp::PostWorker(w) => self.sch_post(s, id, Who::Worker(w as usize)),
            SchOp::End => {
                let sb = self.sb();
                let runtime = sb.shape.runtime;
                let avg = sb.loops() as f64 / runtime as f64;
                let last = sb.report(runtime, true, avg, (0, 0));
                sb.reports.push(last);
                Step::Busy
            }
            SchOp::Message(m) => self.sch_message(s, id, m as usize),
            SchOp::Rps(m) => self.sch_rps(s, id, m as usize),
            SchOp::Nap(m) => {
                let at = self.now + self.sb().msgs[m as usize].nap;
                self.nanosleep(s, id, at)
            }
            SchOp::Request(w) => self.sch_request(s, id, w),
            SchOp::WorkStart(w) => {
                self.sb().workers[w as usize].work_start = now_us;
                Step::Busy
            }
            SchOp::Lock(w) => self.sch_lock(s, id, w as usize),
            SchOp::Unlock(w) => {
                let sb = self.sb();
                if let Some(cpu) = sb.workers[w as usize].held.take() {
                    sb.locks[cpu] = false;
                }
                Step::Busy
            }
            SchOp::Done(w) => {
                let wk = &mut self.sb().workers[w as usize];
                wk.loops += 1;
                wk.runtime = now_us - wk.start.unwrap_or(now_us);
                let delta = now_us.saturating_sub(wk.work_start);
                if delta > 0 {
                    wk.request.add(delta as u32);
                }
                if wk.batch > 1 {
                    // `do { ... } while (req)`: the next request taken, from the top
                    wk.batch -= 1;
                    self.jump(id, 1);
                } else {
                    wk.batch = 0;
                }
                Step::Busy
            }
        }
    }

    /// The running thread `id` is to make `n` futex system calls: true while their kernel
    /// time takes its CPU's (it takes the step again after, without charging them again).
    /// Simplified: the calls' time comes before the step's changes, not between them.
    fn futex_calls(&mut self, s: &mut Sched, id: u32, n: u64) -> bool {
        n > 0 && self.entering(s, id, &[(SchedOp::Futex, n)]).is_none()
    }

    /// `fpost` of `who`'s futex by the running thread `id`: its waiter woken (`FUTEX_WAKE`)
    /// from `id`'s CPU. The call's time is its caller's to charge.
    fn fpost(&mut self, s: &mut Sched, id: u32, who: Who) {
        if let Some(t) = self.sb().futex(who).post() {
            self.wake_one(s, id, t);
        }
    }

    /// A step that is one `fpost`, its `FUTEX_WAKE` charged when it makes one.
    fn sch_post(&mut self, s: &mut Sched, id: u32, who: Who) -> Step {
        let calls = !self.sb().futex(who).running as u64;
        if self.futex_calls(s, id, calls) {
            return self.again(id);
        }
        self.fpost(s, id, who);
        Step::Busy
    }

    /// `fwait` by the running thread `id` on its own futex `who`: None once it is through
    /// (RUNNING → BLOCKED), else the step it takes: `FUTEX_WAIT` (the same step again when
    /// woken), or back from it, the call's time (charged on its return).
    fn fwait(&mut self, s: &mut Sched, id: u32, who: Who) -> Option<Step> {
        if self.sb().futex(who).in_wait && self.futex_calls(s, id, 1) {
            return Some(self.again(id));
        }
        let f = self.sb().futex(who);
        f.in_wait = !f.try_wait(id);
        if !f.in_wait {
            return None;
        }
        self.rewind(id);
        Some(self.block(s, id, "a schbench futex".into()))
    }

    /// `xlist_wake_all` by message thread `m` (`id`): every worker on its list, newest
    /// first, gets the same wake time (`now_us`, taken before the calls) and is posted.
    fn wake_list(&mut self, s: &mut Sched, id: u32, m: usize, now_us: u64) {
        let mut list = std::mem::take(&mut self.sb().msgs[m].list);
        for &w in list.iter().rev() {
            self.sb().workers[w as usize].wake_time = now_us;
            self.fpost(s, id, Who::Worker(w as usize));
        }
        list.clear();
        let sb = self.sb();
        list.append(&mut sb.msgs[m].list);
        sb.msgs[m].list = list; // (its buffer kept)
    }

    /// `run_msg_thread`'s loop, once: wake the listed workers, then wait to be posted.
    /// Simplified: no preemption point at its `FUTEX_WAKE`s' returns (a worker's has one).
    fn sch_message(&mut self, s: &mut Sched, id: u32, m: usize) -> Step {
        let now_us = tv(self.now);
        let msg = &mut self.sb().msgs[m];
        msg.tid = Some(id);
        if msg.futex.in_wait {
            return self.fwait(s, id, Who::Msg(m)).unwrap_or(Step::Busy);
        }
        if self.sb().shape.pipe > 0 {
            return self.sch_message_pipe(s, id, m);
        }
        // the time taken, then a FUTEX_WAKE for each listed worker that waits
        let stamp = *self.sb().msgs[m].stamp.get_or_insert(now_us);
        let sb = self.sb();
        let listed = sb.msgs[m].list.iter();
        let wakes = listed
            .filter(|&&w| !sb.workers[w as usize].futex.running)
            .count();
        if self.futex_calls(s, id, wakes as u64) {
            return self.again(id);
        }
        let msg = &mut self.sb().msgs[m];
        (msg.stamp, msg.futex.running) = (None, false);
        self.wake_list(s, id, m, stamp);
        if self.sb().stopping {
            self.wake_list(s, id, m, now_us);
            self.break_loop(id);
            return Step::Busy;
        }
        self.fwait(s, id, Who::Msg(m)).unwrap_or(Step::Busy)
    }

    /// `run_msg_thread`'s loop in a pipe test, a step per listed worker (newest first):
    /// write its buffer, take the time, post it; then, the list through, the test of
    /// `stopping` (true: one more pass, and out) and the wait to be posted.
    fn sch_message_pipe(&mut self, s: &mut Sched, id: u32, m: usize) -> Step {
        let now_us = tv(self.now);
        let sb = self.sb();
        let units = sb.shape.memset_units;
        let msg = &mut sb.msgs[m];
        if !msg.passing {
            // (`td->futex = FUTEX_BLOCKED` at the loop's top; `xlist_splice`)
            msg.futex.running &= msg.last_pass;
            std::mem::swap(&mut msg.waking, &mut msg.list);
            msg.passing = true;
        }
        if let Some(&w) = msg.waking.last() {
            if !std::mem::replace(&mut msg.written, true) {
                self.work(id, units);
                return self.again(id);
            }
            let stamp = *msg.stamp.get_or_insert(now_us);
            let calls = !sb.workers[w as usize].futex.running as u64;
            if self.futex_calls(s, id, calls) {
                return self.again(id);
            }
            let sb = self.sb();
            let msg = &mut sb.msgs[m];
            (msg.stamp, msg.written) = (None, false);
            msg.waking.pop();
            sb.workers[w as usize].wake_time = stamp;
            self.fpost(s, id, Who::Worker(w as usize));
            return self.again(id);
        }
        msg.passing = false;
        if sb.stopping {
            if !std::mem::replace(&mut msg.last_pass, true) {
                return self.again(id);
            }
            self.break_loop(id);
            return Step::Busy;
        }
        self.fwait(s, id, Who::Msg(m)).unwrap_or(Step::Busy)
    }

    /// `run_rps_thread`'s loop, one request at a time: at a second's start take the time,
    /// queue the second's requests on the workers in turn (backing off 100 µs from one with
    /// too many pending), then sleep out the second (`Nap`, the next step).
    fn sch_rps(&mut self, s: &mut Sched, id: u32, m: usize) -> Step {
        let now_us = tv(self.now);
        let sb = self.sb();
        let (workers, rps) = (sb.shape.workers as u64, sb.rps_goal);
        let first = m as u64 * workers;
        if sb.stopping {
            for w in first..first + workers {
                self.fpost(s, id, Who::Worker(w as usize));
            }
            self.break_loop(id);
            return Step::Busy;
        }
        let msg = &mut sb.msgs[m];
        msg.tid = Some(id);
        if msg.burst == 0 {
            (msg.burst, msg.second_start) = (1, now_us);
        }
        if msg.burst > rps {
            let delta = now_us.saturating_sub(msg.second_start);
            if delta < USEC_PER_SEC {
                msg.nap = (USEC_PER_SEC - delta) * 1000;
                return Step::Busy;
            }
            msg.burst = 0;
            self.rewind(id);
            return Step::Busy;
        }
        let w = (first + msg.cur_tid % workers) as usize;
        let stamp = *msg.stamp.get_or_insert(now_us);
        let wk = &sb.workers[w];
        let (post, running) = (wk.pending <= RPS_BATCH, wk.futex.running);
        if post && self.futex_calls(s, id, !running as u64) {
            return self.again(id);
        }
        let sb = self.sb();
        let msg = &mut sb.msgs[m];
        msg.burst += 1;
        msg.cur_tid += 1;
        msg.stamp = None;
        if !post {
            msg.nap = RPS_BACKOFF_NS;
            return Step::Busy;
        }
        let wk = &mut sb.workers[w];
        wk.pending += 1;
        wk.queued += 1;
        wk.wake_time = stamp;
        self.fpost(s, id, Who::Worker(w));
        self.rewind(id);
        Step::Busy
    }

    /// `msg_and_wait` (and the worker loop's test of `stopping` before it): enlist with the
    /// message thread (RPS mode: take the requests queued, if any), post it, wait to be
    /// posted; then count the wakeup latency from the time the message thread gave it.
    fn sch_request(&mut self, s: &mut Sched, id: u32, w: u32) -> Step {
        let now_us = tv(self.now);
        let sb = self.sb();
        let rps = sb.rps_goal > 0;
        let m = sb.msg_of(w);
        let units = sb.shape.memset_units;
        let wk = &mut sb.workers[w as usize];
        wk.tid = Some(id);
        let start = *wk.start.get_or_insert(now_us);
        let me = Who::Worker(w as usize);
        if wk.futex.in_wait {
            // back from it, the call's return before it takes the time
            return (self.fwait(s, id, me)).unwrap_or_else(|| self.woken(id, w, rps));
        }
        if std::mem::take(&mut wk.posted) {
            return self.await_post(s, id, w, rps);
        }
        if sb.stopping {
            wk.runtime = now_us - start;
            self.break_loop(id);
            return Step::Busy;
        }
        if sb.shape.pipe > 0 && !std::mem::replace(&mut wk.written, true) {
            self.work(id, units);
            return self.again(id);
        }
        // its FUTEX_WAKE of the message thread, if that one is not posted yet (none in RPS
        // mode with requests queued); its FUTEX_WAIT's time comes on its return
        let taken = rps && wk.queued > 0;
        let calls = (!taken && !sb.msgs[m].futex.running) as u64;
        if self.futex_calls(s, id, calls) {
            return self.again(id);
        }
        let sb = self.sb();
        let wk = &mut sb.workers[w as usize];
        (wk.futex.running, wk.written) = (false, false);
        wk.wake_time = now_us;
        if rps {
            wk.pending = 0;
            if wk.queued > 0 {
                (wk.batch, wk.queued) = (wk.queued, 0);
                wk.futex.running = true;
                return Step::Busy;
            }
        } else {
            sb.msgs[m].list.push(w);
        }
        self.fpost(s, id, Who::Msg(m));
        if calls > 0 && self.user_return(s, id) {
            self.sb().workers[w as usize].posted = true;
            self.rewind(id);
            return Step::Busy;
        }
        self.await_post(s, id, w, rps)
    }

    /// `msg_and_wait`'s end: wait to be posted (unless schbench is stopping), then count
    /// the wakeup latency.
    fn await_post(&mut self, s: &mut Sched, id: u32, w: u32, rps: bool) -> Step {
        if !self.sb().stopping {
            if let Some(step) = self.fwait(s, id, Who::Worker(w as usize)) {
                return step;
            }
        }
        self.woken(id, w, rps)
    }

    /// Back from `fwait`: the wakeup latency counted; in RPS mode, on to take the requests
    /// (the loop's `continue`).
    fn woken(&mut self, id: u32, w: u32, rps: bool) -> Step {
        let now_us = tv(self.now);
        let wk = &mut self.sb().workers[w as usize];
        let delta = now_us.saturating_sub(wk.wake_time);
        if delta > 0 {
            wk.wakeup.add(delta as u32);
        }
        if rps {
            self.rewind(id);
        }
        Step::Busy
    }

    /// `lock_this_cpu`: take the lock of the CPU it is on, spinning while another holds it;
    /// if it moved meanwhile, the lock of the CPU it is on now.
    fn sch_lock(&mut self, s: &mut Sched, id: u32, w: usize) -> Step {
        let (cpu, now) = (s.task_cpu(id), self.now);
        let sb = self.sb();
        loop {
            let wk = &mut sb.workers[w];
            let want = wk.spin_cpu.unwrap_or(cpu);
            if sb.locks[want] {
                wk.spin_cpu = Some(want);
                self.rewind(id);
                self.spin(id, now + SPIN_NS);
                return Step::Busy;
            }
            wk.spin_cpu = None;
            if want == cpu {
                sb.locks[cpu] = true;
                wk.held = Some(cpu);
                return Step::Busy;
            }
        }
    }

    /// `sleep_for_runtime`'s loop, once: the RPS sample of the second (or, past the
    /// warmup, the statistics zeroed), a report at each interval, the statistics zeroed
    /// every `-z`, and at the runtime's end `stopping`.
    fn sch_tick(&mut self, s: &mut Sched, id: u32) -> Step {
        let now = tv(self.now);
        let sb = self.sb();
        let shape = sb.shape;
        if sb.main.start.is_none() {
            let m = &mut sb.main;
            (m.start, m.last_calc, m.last_rps_calc, m.zero_time) = (Some(now), now, now, now);
        }
        let start = sb.main.start.unwrap_or(now);
        let runtime_delta = now - start;
        let done = runtime_delta >= shape.runtime * USEC_PER_SEC;
        if shape.pipe > 0 {
            // (a pipe test has no warmup, RPS samples or interval reports)
        } else if sb.rps_goal == 0
            && shape.warmup > 0
            && runtime_delta > shape.warmup * USEC_PER_SEC
            && !sb.main.warmup_done
        {
            sb.main.warmup_done = true;
            sb.main.zero_time = now;
            sb.reset();
        } else {
            let delta = now - sb.main.last_rps_calc;
            let loops = sb.loops();
            let rps = ((loops - sb.main.last_loops) * USEC_PER_SEC) as f64 / delta as f64;
            (sb.main.last_loops, sb.main.last_rps_calc) = (loops, now);
            if shape.auto_rps == 0 || sb.auto.target_hit {
                sb.rps.add(if rps.is_finite() { rps as u32 } else { 0 });
            }
            if now - sb.main.last_calc >= shape.interval * USEC_PER_SEC {
                sb.main.last_calc = now;
                let delays = self.sched_delays(s);
                let sb = self.sb();
                let report = sb.report(runtime_delta / USEC_PER_SEC, false, rps, delays);
                sb.reports.push(report);
            }
        }
        let sb = self.sb();
        if shape.zero > 0 && now - sb.main.zero_time > shape.zero * USEC_PER_SEC {
            sb.main.zero_time = now;
            sb.reset();
        }
        if shape.auto_rps > 0 {
            self.auto_scale_rps();
        }
        if done {
            self.sb().stopping = true;
            self.break_loop(id);
        }
        Step::Busy
    }

    /// `auto_scale_rps`: /proc/stat read, the rate scaled (after the first read), and the
    /// RPS histogram zeroed when the target is first reached.
    fn auto_scale_rps(&mut self) {
        let elapsed = (self.now - super::SIM_START) * self.cpus.len() as u64;
        let busy_ns: u64 = self.cpus.iter().map(|c| c.busy_at(self.now)).sum();
        let sb = self.sb();
        let Some(busy) = sb.auto.read_busy(elapsed - busy_ns, busy_ns) else {
            return;
        };
        let (goal, reached) = sb.auto.scale(sb.rps_goal, busy, sb.shape.auto_rps);
        sb.rps_goal = goal;
        if reached {
            sb.rps.reset();
        }
    }

    /// `collect_sched_delay`: the message threads' and the workers' mean of each one's
    /// `run_delay / pcount` (ns), in µs.
    fn sched_delays(&mut self, s: &Sched) -> (u64, u64) {
        let delay = |tid: Option<u32>| {
            tid.map_or(0, |t| {
                let si = &s.task(t).sched_info;
                si.run_delay.checked_div(si.pcount).unwrap_or(0)
            })
        };
        let sb = self.sb();
        let msgs: u64 = sb.msgs.iter().map(|m| delay(m.tid)).sum();
        let workers: u64 = sb.workers.iter().map(|w| delay(w.tid)).sum();
        let n = sb.shape.message_threads as u64;
        (
            msgs / n / 1000,
            workers / (n * sb.shape.workers as u64) / 1000,
        )
    }

    /// Busy-wait until `until` (a spin), then take the step again.
    fn spin(&mut self, id: u32, until: Ns) {
        self.threads[id as usize].action = Action::Until(until);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_512_then_256_per_power_of_two() {
        // 300: msb 8 ≤ PLAT_BITS, its own bucket. 1000: msb 9, one error bit; base
        // (1 + 1) << 8 = 512, offset 255 & (1000 >> 1) = 244: bucket 756, whose value is
        // 2^9 + 244·2 + 1 = 1001 (the middle of [1000, 1002)).
        assert_eq!((plat_val_to_idx(300), plat_idx_to_val(300)), (300, 300));
        assert_eq!(plat_val_to_idx(511), 511);
        assert_eq!(plat_val_to_idx(1000), 756);
        assert_eq!(plat_idx_to_val(756), 1001);
        // 2^20 + 5: msb 20, 12 error bits; base 13 << 8 = 3328, offset 256 − 256 = 0 →
        // 3328; its value 2^20 + 0 + 2^11.
        assert_eq!(plat_val_to_idx((1 << 20) + 5), 3328);
        assert_eq!(plat_idx_to_val(3328), (1 << 20) + 2048);
        // u32::MAX: msb 31, 23 error bits: 24·256 + 255 = 6399, cut to PLAT_NR − 1.
        assert_eq!(plat_val_to_idx(u32::MAX), PLAT_NR - 1);
    }

    #[test]
    fn percentiles_walk_the_buckets_and_count_between_them() {
        // 10 samples 1..=10: the 20th percentile is reached at the 2nd (2 ≥ 0.2·10), the
        // 50th at the 5th, the 90th at the 9th, the 99th and 99.9th at the 10th.
        let mut p = Plat::default();
        for us in (1..=10).rev() {
            p.add(us);
        }
        let f = p.figures();
        assert_eq!(f.values, [2, 5, 9, 10, 10]);
        assert_eq!(f.counts, [2, 3, 4, 1, 0]);
        assert_eq!((f.samples, f.min, f.max), (10, 1, 10));
    }

    #[test]
    fn a_zero_sample_is_min_only_until_the_next() {
        // add_lat: `min == 0 || us < min` takes any sample after a 0.
        let mut p = Plat::default();
        p.add(0);
        assert_eq!(p.min, 0);
        p.add(414);
        p.add(417);
        assert_eq!((p.min, p.max), (414, 417));
        // no sample: every percentile is bucket 0's value
        assert_eq!(Plat::default().figures().values, [0; 5]);
    }
}
