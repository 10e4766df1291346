//! Perfetto's `compact_sched` (Android's default for `sched_switch` and `sched_waking`):
//! a bundle's switches and wakings as parallel packed lists, each list's times
//! delta-encoded (the first absolute), the comms interned. A switch records only its next
//! task and the previous one's state: the previous task is the one the CPU's last switch
//! ran, as Perfetto's trace processor takes it (unknown before the CPU's first switch:
//! the idle task). A waking records no waker: it is the task running on the CPU then.

use super::perfetto::{Fields, Owned, Value};
use crate::time::Ns;
use crate::trace::perfetto::protos::compact;
use crate::tracepoint::in_interrupt;

/// The task a CPU's last switch ran: pid, comm, prio.
pub type Current = Option<(i32, String, i32)>;

/// Field `n`'s values: packed, or one per field.
#[derive(Default)]
struct Lists<'a> {
    lists: Vec<(u32, Vec<u64>)>,
    intern: Vec<&'a [u8]>,
}

impl Lists<'_> {
    fn get(&self, n: u32) -> &[u64] {
        (self.lists.iter())
            .find(|(k, _)| *k == n)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// Comm `i` of the intern table.
    fn comm(&self, i: u64) -> Result<String, ()> {
        let s = self.intern.get(i as usize).ok_or(())?;
        Ok(String::from_utf8_lossy(s).into_owned())
    }
}

/// The `CompactSched` message `b` of CPU `cpu`'s bundle as events, `current` the task its
/// last switch ran (updated). Lists of one kind that differ in length are damage.
pub fn events(b: &[u8], current: &mut Current) -> Result<Vec<(Ns, Owned)>, ()> {
    let mut l = Lists::default();
    let mut f = Fields::of(b);
    while let Some(field) = f.next() {
        match field? {
            (compact::INTERN_TABLE, Value::Bytes(s)) => l.intern.push(s),
            (n, v) => {
                let list = match l.lists.iter().position(|(k, _)| *k == n) {
                    Some(i) => &mut l.lists[i].1,
                    None => {
                        l.lists.push((n, vec![]));
                        &mut l.lists.last_mut().unwrap().1
                    }
                };
                match v {
                    Value::Int(x) => list.push(x),
                    Value::Bytes(packed) => {
                        let mut p = Fields::of(packed);
                        while !p.done() {
                            list.push(p.varint().ok_or(())?);
                        }
                    }
                }
            }
        }
    }
    let mut out = vec![];
    switches(&l, current, &mut out)?;
    wakings(&l, &mut out)?;
    Ok(out)
}

/// The switches: each one's previous task is `current`, its next the new `current`.
fn switches(l: &Lists, current: &mut Current, out: &mut Vec<(Ns, Owned)>) -> Result<(), ()> {
    use compact::*;
    let times = l.get(SWITCH_TIMESTAMP);
    let [state, pid, prio, comm] = [
        SWITCH_PREV_STATE,
        SWITCH_NEXT_PID,
        SWITCH_NEXT_PRIO,
        SWITCH_NEXT_COMM_INDEX,
    ]
    .map(|n| l.get(n));
    if [state, pid, prio, comm]
        .iter()
        .any(|v| v.len() != times.len())
    {
        return Err(());
    }
    let mut ts: Ns = 0;
    for i in 0..times.len() {
        ts = ts.checked_add(times[i]).ok_or(())?;
        let next = (pid[i] as i32, l.comm(comm[i])?, prio[i] as i32);
        let (prev, prev_comm, prev_prio) = current.replace(next.clone()).unwrap_or_default();
        let sw = Owned::Switch(
            (prev, prev_comm),
            state[i] as i64,
            prev_prio,
            (next.0, next.1),
            next.2,
        );
        out.push((ts, sw));
    }
    Ok(())
}

/// The wakings, their waker unrecorded.
fn wakings(l: &Lists, out: &mut Vec<(Ns, Owned)>) -> Result<(), ()> {
    use compact::*;
    let times = l.get(WAKING_TIMESTAMP);
    let [pid, comm, flags] = [WAKING_PID, WAKING_COMM_INDEX, WAKING_COMMON_FLAGS].map(|n| l.get(n));
    if pid.len() != times.len() || comm.len() != times.len() {
        return Err(());
    }
    let mut ts: Ns = 0;
    for i in 0..times.len() {
        ts = ts.checked_add(times[i]).ok_or(())?;
        let irq = flags.get(i).is_some_and(|&f| in_interrupt(f));
        out.push((ts, Owned::Waking(None, pid[i] as i32, irq)));
    }
    Ok(())
}
