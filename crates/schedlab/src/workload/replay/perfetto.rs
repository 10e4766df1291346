//! Reading a Perfetto trace's scheduler events: the `ftrace_events` bundles of its packets
//! (`protos/perfetto/trace/ftrace/ftrace_event_bundle.proto`: a CPU, and its events, each
//! a time, a pid, `common_flags` and one event message), as the rebuild's `SchedEvent`s;
//! the kernel's release from `system_info`. Each event message's fields are numbered as
//! the kernel's format orders them, which the tracepoint catalogue records
//! (`PerfettoEvent`); a bundle's `compact_sched` (Android's default encoding of switches
//! and wakings) is read by `compact_sched.rs`. Bundles of different CPUs interleave, so the
//! events are gathered, then ordered by time (at one instant, by CPU, then as read).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};

use super::compact_sched::{self, Current};
use super::rebuild::{SchedEvent, Switch};
use crate::error::InputError;
use crate::time::Ns;
use crate::trace::perfetto::protos::{
    bundle, ftrace, packet, system, I32, I64, LEN, TRACE_PACKET, VARINT,
};
use crate::tracepoint::{in_interrupt, EVENTS};

/// The largest packet read.
const MAX_PACKET: u64 = 256 << 20;

/// A field's value.
#[derive(Clone, Copy)]
pub(super) enum Value<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

/// A message's fields, in order.
pub(super) struct Fields<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    pub(super) fn of(b: &'a [u8]) -> Fields<'a> {
        Fields { b, at: 0 }
    }

    /// Whether every byte was read.
    pub(super) fn done(&self) -> bool {
        self.at >= self.b.len()
    }

    pub(super) fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.at)?;
            self.at += 1;
            v |= ((byte & 0x7f) as u64) << shift;
            if byte < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let b = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(b)
    }

    /// The next field (None: the end; Some(Err): damage).
    pub(super) fn next(&mut self) -> Option<Result<(u32, Value<'a>), ()>> {
        if self.at >= self.b.len() {
            return None;
        }
        let mut field = || -> Option<(u32, Value<'a>)> {
            let tag = self.varint()?;
            let n = (tag >> 3) as u32;
            let v = match (tag & 7) as u32 {
                VARINT => Value::Int(self.varint()?),
                I64 => Value::Int(u64::from_le_bytes(self.take(8)?.try_into().ok()?)),
                I32 => Value::Int(u32::from_le_bytes(self.take(4)?.try_into().ok()?) as u64),
                LEN => {
                    let len = usize::try_from(self.varint()?).ok()?;
                    Value::Bytes(self.take(len)?)
                }
                _ => return None,
            };
            Some((n, v))
        };
        Some(field().ok_or(()))
    }
}

/// A scheduler event as read, owning its comms (the events are kept until all are read).
#[derive(Debug, Clone)]
pub(super) enum Owned {
    /// prev and its comm, prev_state, prev_prio; next and its comm, next_prio.
    Switch((i32, String), i64, i32, (i32, String), i32),
    Waking(Option<i32>, i32, bool),
    Rename(i32, String),
    Frequency(usize, u64),
    Migrate(i32),
}

impl Owned {
    fn event(&self) -> SchedEvent<'_> {
        match *self {
            Owned::Switch(
                (prev, ref prev_comm),
                prev_state,
                prev_prio,
                (next, ref next_comm),
                next_prio,
            ) => SchedEvent::Switch(Switch {
                prev,
                prev_comm,
                prev_state,
                prev_prio,
                next,
                next_comm,
                next_prio,
            }),
            Owned::Waking(waker, target, irq) => SchedEvent::Waking { waker, target, irq },
            Owned::Rename(pid, ref comm) => SchedEvent::Rename { pid, comm },
            Owned::Frequency(cpu, khz) => SchedEvent::Frequency { cpu, khz },
            Owned::Migrate(pid) => SchedEvent::Migrate { pid },
        }
    }
}

/// An event's Perfetto message: its id in `FtraceEvent`, the event's name, its field
/// numbers by the kernel's field name.
struct Message {
    id: u32,
    name: &'static str,
    fields: Vec<(&'static str, u32)>,
}

/// The messages of the events read.
struct Messages {
    all: Vec<Message>,
}

impl Messages {
    fn new() -> Messages {
        let names = [
            "sched_switch",
            "sched_waking",
            "task_rename",
            "cpu_frequency",
            "sched_migrate_task",
        ];
        let all = (EVENTS.iter())
            .filter(|f| names.contains(&f.name))
            .filter_map(|f| {
                let p = f.perfetto.as_ref()?;
                let fields = f
                    .fields
                    .iter()
                    .zip(p.fields)
                    .map(|(&(n, _), &num)| (n, num))
                    .collect();
                Some(Message {
                    id: p.id,
                    name: f.name,
                    fields,
                })
            })
            .collect();
        Messages { all }
    }
}

/// A Perfetto trace's scheduler events in time order, with the kernel's release and the
/// highest CPU seen.
pub struct PerfettoTrace {
    events: Vec<(Ns, usize, Owned)>,
    pub release: Option<String>,
    pub nr_cpus: usize,
    /// `sched_switch` events read.
    pub switches: u64,
    /// The task each CPU's last switch ran (compact_sched's switches leave it implied).
    current: HashMap<usize, Current>,
}

impl PerfettoTrace {
    /// Read `file` (named `path` in errors).
    pub fn read(file: File, path: &str) -> Result<PerfettoTrace, InputError> {
        let bad = |at: u64, what: &str| InputError::new(format!("{path}: offset {at}"), what);
        let mut r = BufReader::new(file);
        let msgs = Messages::new();
        let mut t = PerfettoTrace {
            events: vec![],
            release: None,
            nr_cpus: 0,
            switches: 0,
            current: HashMap::new(),
        };
        let (mut at, mut packet) = (0u64, Vec::new());
        while let Some((tag, len, head)) = packet_head(&mut r).map_err(|e| bad(at, &e))? {
            if tag != ((TRACE_PACKET << 3) | LEN) as u64 || len > MAX_PACKET {
                let what = if at == 0 {
                    "not a trace: neither trace.dat's magic, trace text (cpus=N) nor a Perfetto trace packet"
                } else {
                    "not a trace packet"
                };
                return Err(bad(at, what));
            }
            packet.resize(len as usize, 0);
            r.read_exact(&mut packet)
                .map_err(|_| bad(at, "the file ends within a packet"))?;
            t.packet(&packet, &msgs)
                .map_err(|()| bad(at, "a damaged packet"))?;
            at += head + len;
        }
        t.events.sort_by_key(|e| (e.0, e.1));
        Ok(t)
    }

    fn packet(&mut self, p: &[u8], msgs: &Messages) -> Result<(), ()> {
        let mut f = Fields::of(p);
        while let Some(field) = f.next() {
            match field? {
                (packet::FTRACE_EVENTS, Value::Bytes(b)) => self.bundle(b, msgs)?,
                (packet::SYSTEM_INFO, Value::Bytes(b)) => self.system(b),
                _ => {}
            }
        }
        Ok(())
    }

    fn bundle(&mut self, b: &[u8], msgs: &Messages) -> Result<(), ()> {
        let (mut cpu, mut events, mut compact) = (None, vec![], None);
        let mut f = Fields::of(b);
        while let Some(field) = f.next() {
            match field? {
                (bundle::CPU, Value::Int(c)) => cpu = Some(c as usize),
                (bundle::EVENT, Value::Bytes(e)) => events.push(e),
                (bundle::COMPACT_SCHED, Value::Bytes(c)) => compact = Some(c),
                _ => {}
            }
        }
        let cpu = cpu.ok_or(())?;
        self.nr_cpus = self.nr_cpus.max(cpu + 1);
        let current = self.current.entry(cpu).or_default();
        let mut read = vec![];
        for e in events {
            if let Some((ts, ev)) = event(e, msgs)? {
                if let Owned::Switch(_, _, _, (next, ref comm), prio) = ev {
                    *current = Some((next, comm.clone(), prio));
                }
                read.push((ts, ev));
            }
        }
        if let Some(c) = compact {
            read.extend(compact_sched::events(c, current)?);
        }
        for (ts, ev) in read {
            self.switches += matches!(ev, Owned::Switch(..)) as u64;
            self.events.push((ts, cpu, ev));
        }
        Ok(())
    }

    /// A `SystemInfo`: the kernel's release (`utsname`), the CPUs.
    fn system(&mut self, b: &[u8]) {
        let mut f = Fields::of(b);
        while let Some(Ok(field)) = f.next() {
            match field {
                (system::NUM_CPUS, Value::Int(n)) => self.nr_cpus = self.nr_cpus.max(n as usize),
                (system::UTSNAME, Value::Bytes(u)) => {
                    let mut g = Fields::of(u);
                    while let Some(Ok(field)) = g.next() {
                        if let (system::RELEASE, Value::Bytes(s)) = field {
                            self.release = Some(String::from_utf8_lossy(s).into_owned());
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Hand `f` each event in time order with its CPU.
    pub fn for_each(&self, mut f: impl FnMut(Ns, usize, SchedEvent)) {
        for (ts, cpu, ev) in &self.events {
            f(*ts, *cpu, ev.event());
        }
    }
}

/// A packet's tag and length, and the bytes they took (None: the file's end).
fn packet_head(r: &mut impl Read) -> Result<Option<(u64, u64, u64)>, String> {
    let mut read = 0u64;
    let mut varint = |first: bool| -> Result<Option<u64>, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let mut byte = [0u8];
            if r.read(&mut byte).map_err(|e| e.to_string())? == 0 {
                return if first && shift == 0 {
                    Ok(None)
                } else {
                    Err("the file ends within a packet's head".into())
                };
            }
            read += 1;
            v |= ((byte[0] & 0x7f) as u64) << shift;
            if byte[0] < 0x80 {
                return Ok(Some(v));
            }
        }
        Err("a varint over 10 bytes".into())
    };
    let Some(tag) = varint(true)? else {
        return Ok(None);
    };
    let len = varint(false)?.unwrap_or(0);
    Ok(Some((tag, len, read)))
}

/// An `FtraceEvent`: its time and scheduler event (None: another event).
fn event(b: &[u8], msgs: &Messages) -> Result<Option<(Ns, Owned)>, ()> {
    let (mut ts, mut pid, mut flags, mut body) = (0, 0, 0, None);
    let mut f = Fields::of(b);
    while let Some(field) = f.next() {
        match field? {
            (ftrace::TIMESTAMP, Value::Int(v)) => ts = v,
            (ftrace::PID, Value::Int(v)) => pid = v as i32,
            (ftrace::COMMON_FLAGS, Value::Int(v)) => flags = v,
            (n, Value::Bytes(m)) => {
                if let Some(msg) = msgs.all.iter().find(|x| x.id == n) {
                    body = Some((msg, m));
                }
            }
            _ => {}
        }
    }
    let Some((msg, m)) = body else {
        return Ok(None);
    };
    let mut values: Vec<(u32, Value)> = vec![];
    let mut g = Fields::of(m);
    while let Some(field) = g.next() {
        values.push(field?);
    }
    let get = |field: &str| {
        let num = msg.fields.iter().find(|x| x.0 == field)?.1;
        values.iter().rev().find(|v| v.0 == num).map(|v| v.1)
    };
    let int = |field: &str| match get(field) {
        Some(Value::Int(v)) => v as i64,
        _ => 0,
    };
    let text = |field: &str| match get(field) {
        Some(Value::Bytes(s)) => String::from_utf8_lossy(s).into_owned(),
        _ => String::new(),
    };
    let ev = match msg.name {
        "sched_switch" => Owned::Switch(
            (int("prev_pid") as i32, text("prev_comm")),
            int("prev_state"),
            int("prev_prio") as i32,
            (int("next_pid") as i32, text("next_comm")),
            int("next_prio") as i32,
        ),
        "sched_waking" => Owned::Waking(Some(pid), int("pid") as i32, in_interrupt(flags)),
        "task_rename" => Owned::Rename(int("pid") as i32, text("newcomm")),
        "sched_migrate_task" => Owned::Migrate(int("pid") as i32),
        _ => Owned::Frequency(int("cpu_id") as usize, int("state") as u64),
    };
    Ok(Some((ts, ev)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// Field `n` of a message: a varint, or `bytes` (length-delimited).
    fn int(out: &mut Vec<u8>, n: u64, v: u64) {
        varint(out, n << 3);
        varint(out, v);
    }

    fn bytes(out: &mut Vec<u8>, n: u64, b: &[u8]) {
        varint(out, (n << 3) | 2);
        varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }

    /// A trace of one packet: CPU 1's bundle with `events` (each an `FtraceEvent`).
    fn trace(events: &[Vec<u8>]) -> Vec<u8> {
        trace_on(1, events)
    }

    /// A trace of one packet: CPU `cpu`'s bundle with `events`.
    fn trace_on(cpu: u64, events: &[Vec<u8>]) -> Vec<u8> {
        let mut bundle = vec![];
        int(&mut bundle, 1, cpu);
        for e in events {
            bytes(&mut bundle, 2, e);
        }
        let mut packet = vec![];
        bytes(&mut packet, 1, &bundle);
        let mut t = vec![];
        bytes(&mut t, 1, &packet);
        t
    }

    /// An `FtraceEvent` at `ts` in `pid`'s context with `flags`: message `id` of `fields`.
    fn event(ts: u64, pid: u64, flags: u64, id: u64, fields: &[(u64, u64)]) -> Vec<u8> {
        let mut m = vec![];
        for &(n, v) in fields {
            int(&mut m, n, v);
        }
        let mut e = vec![];
        int(&mut e, 1, ts);
        int(&mut e, 2, pid);
        if flags != 0 {
            int(&mut e, 5, flags);
        }
        bytes(&mut e, id, &m);
        e
    }

    fn read(bytes: &[u8]) -> Result<PerfettoTrace, InputError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.perfetto-trace");
        std::fs::write(&path, bytes).unwrap();
        PerfettoTrace::read(File::open(&path).unwrap(), "t.pftrace")
    }

    /// Events written by hand with Perfetto's message numbers (sched_switch 4: prev_pid 2,
    /// prev_state 4, next_pid 6; sched_waking 20: pid 2; cpu_frequency 11: state 1, cpu_id
    /// 2), out of time order in the bundle: read in time order, the waking's hard interrupt
    /// kept.
    #[test]
    fn hand_written_events_read_in_time_order() {
        let t = read(&trace(&[
            event(300, 0, 0, 4, &[(2, 0), (4, 0), (6, 7)]),
            event(100, 5, 0x09, 20, &[(2, 7)]),
            event(200, 0, 0, 11, &[(1, 1_000_000), (2, 1)]),
        ]))
        .unwrap();
        assert_eq!((t.nr_cpus, t.switches), (2, 1));
        let mut got = vec![];
        t.for_each(|ts, cpu, ev| got.push(format!("{ts} {cpu} {ev:?}")));
        assert_eq!(
            got,
            [
                "100 1 Waking { waker: Some(5), target: 7, irq: true }",
                "200 1 Frequency { cpu: 1, khz: 1000000 }",
                "300 1 Switch(Switch { prev: 0, prev_comm: \"\", prev_state: 0, prev_prio: 0, next: 7, next_comm: \"\", next_prio: 0 })",
            ]
        );
    }

    /// Field `n`: `vals` packed.
    fn packed(out: &mut Vec<u8>, n: u64, vals: &[u64]) {
        let mut p = vec![];
        for &v in vals {
            varint(&mut p, v);
        }
        bytes(out, n, &p);
    }

    /// A packet of CPU 0's bundle with a `compact_sched` of switches at 100, 200 and 300 ns
    /// to a (101), b (102) and the idle task, the previous task sleeping each time, and b's
    /// waking at 150.
    fn compact_packet(next_prio: &[u64]) -> Vec<u8> {
        let mut c = vec![];
        packed(&mut c, 1, &[100, 100, 100]); // delta-encoded: 100, 200, 300
        packed(&mut c, 2, &[1, 1, 1]);
        packed(&mut c, 3, &[101, 102, 0]);
        packed(&mut c, 4, next_prio);
        for comm in ["a", "b", "swapper/0"] {
            bytes(&mut c, 5, comm.as_bytes());
        }
        packed(&mut c, 6, &[0, 1, 2]);
        packed(&mut c, 7, &[150]);
        packed(&mut c, 8, &[102]);
        packed(&mut c, 11, &[1]);
        packed(&mut c, 12, &[0]);
        let mut bundle = vec![];
        int(&mut bundle, 1, 0);
        bytes(&mut bundle, 4, &c);
        let mut packet = vec![];
        bytes(&mut packet, 1, &bundle);
        let mut t = vec![];
        bytes(&mut t, 1, &packet);
        t
    }

    /// compact_sched read by hand: each switch's previous task is the one the CPU's last
    /// switch ran (b, first, from CPU 0's earlier bundle of regular events), a waking's
    /// waker the task running then (unrecorded). Rebuilt, a posts b: the waking came from a.
    #[test]
    fn compact_sched_switches_and_wakings() {
        let mut file = trace_on(0, &[event(50, 0, 0, 4, &[(6, 102), (7, 120)])]);
        file.extend(compact_packet(&[120, 120, 120]));
        let t = read(&file).unwrap();
        assert_eq!((t.nr_cpus, t.switches), (1, 4));
        let mut got = vec![];
        t.for_each(|ts, cpu, ev| got.push(format!("{ts} {cpu} {ev:?}")));
        let sw = |ts, (prev, pc, pp): (i32, &str, i32), state, (next, nc, np): (i32, &str, i32)| {
            format!(
                "{ts} 0 Switch(Switch {{ prev: {prev}, prev_comm: {pc:?}, prev_state: {state}, \
                 prev_prio: {pp}, next: {next}, next_comm: {nc:?}, next_prio: {np} }})"
            )
        };
        let (a, b, b0) = ((101, "a", 120), (102, "b", 120), (102, "", 120));
        assert_eq!(
            got,
            [
                sw(50, (0, "", 0), 0, b0),
                sw(100, b0, 1, a),
                "150 0 Waking { waker: None, target: 102, irq: false }".into(),
                sw(200, a, 1, b),
                sw(300, b, 1, (0, "swapper/0", 120)),
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.pftrace");
        std::fs::write(&path, &file).unwrap();
        let r = crate::workload::replay::replay(&path, Default::default()).unwrap();
        assert!(r.json.contains("\"sem_post0\": \"b-102\""), "{}", r.json);
    }

    /// Lists of one kind whose lengths differ are damage.
    #[test]
    fn a_compact_sched_with_lists_of_other_lengths_is_refused() {
        let err = read(&compact_packet(&[120, 120]))
            .err()
            .unwrap()
            .to_string();
        assert_eq!(err, "t.pftrace: offset 0: a damaged packet");
    }

    #[test]
    fn damage_is_refused_with_its_offset() {
        let good = trace(&[event(300, 0, 0, 4, &[(6, 7)])]);
        let cut = read(&good[..good.len() - 3]).err().unwrap().to_string();
        assert_eq!(cut, "t.pftrace: offset 0: the file ends within a packet");
        let mut bad = good.clone();
        bad.extend_from_slice(&[0x0a, 0x02, 0xff, 0xff]); // a packet whose field runs past it
        let err = read(&bad).err().unwrap().to_string();
        assert_eq!(
            err,
            format!("t.pftrace: offset {}: a damaged packet", good.len())
        );
    }

    #[test]
    fn a_trace_without_switches_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.perfetto-trace");
        std::fs::write(
            &path,
            trace(&[event(200, 0, 0, 11, &[(1, 1_000_000), (2, 1)])]),
        )
        .unwrap();
        let err = crate::workload::replay::replay(&path, Default::default())
            .err()
            .unwrap()
            .to_string();
        assert!(err
            .ends_with("the trace has no sched_switch event (record ftrace's sched/sched_switch)"));
    }
}
