//! The scheduler's events in trace.dat records: each event's fields found once in its
//! format (`sched_switch`, `sched_waking`, `task_rename`, `cpu_frequency`,
//! `sched_migrate_task`), and a record read as the rebuild's `SchedEvent`.

use super::format::{EventFormat, Field, Record};
use super::Meta;
use crate::error::InputError;
use crate::tracepoint::in_interrupt;
use crate::workload::replay::rebuild::{SchedEvent, Switch};

/// The fields read, of the events the rebuild uses.
pub struct SchedFields {
    switch: u16,
    prev_pid: Field,
    prev_state: Field,
    prev_prio: Field,
    next_pid: Field,
    prev_comm: Field,
    next_comm: Field,
    next_prio: Field,
    flags: Field,
    waking: Option<(u16, Field)>,
    rename: Option<(u16, Field, Field)>,
    frequency: Option<(u16, Field, Field)>,
    migrate: Option<(u16, Field)>,
}

impl SchedFields {
    /// The fields of `meta`'s events; a trace without `sched_switch` is refused.
    pub fn of(meta: &Meta, origin: &str) -> Result<SchedFields, InputError> {
        let no_switch = || {
            InputError::new(
                origin,
                "the trace has no sched_switch event (record it with -e sched)",
            )
        };
        let find = |name: &str| meta.events.values().find(|e| e.name == name);
        let f = |e: &EventFormat, n: &str| e.field(n).cloned();
        let one = |name, field| find(name).and_then(|e| Some((e.id, f(e, field)?)));
        let two = |name, a, b| find(name).and_then(|e| Some((e.id, f(e, a)?, f(e, b)?)));
        let sw = find("sched_switch").ok_or_else(no_switch)?;
        let field = |n| f(sw, n).ok_or_else(no_switch);
        Ok(SchedFields {
            switch: sw.id,
            prev_pid: field("prev_pid")?,
            prev_state: field("prev_state")?,
            prev_prio: field("prev_prio")?,
            next_pid: field("next_pid")?,
            prev_comm: field("prev_comm")?,
            next_comm: field("next_comm")?,
            next_prio: field("next_prio")?,
            flags: field("common_flags")?,
            waking: one("sched_waking", "pid"),
            rename: two("task_rename", "pid", "newcomm"),
            frequency: two("cpu_frequency", "state", "cpu_id"),
            migrate: one("sched_migrate_task", "pid"),
        })
    }

    /// Whether the trace recorded `sched_migrate_task`.
    pub fn migrations(&self) -> bool {
        self.migrate.is_some()
    }

    /// Record `r` as a scheduler event (None: another event).
    pub fn event<'a>(&self, r: Record<'a>) -> Option<SchedEvent<'a>> {
        let id = r.id();
        let pid = |f: &Field| r.int(f) as i32;
        if id == self.switch {
            return Some(SchedEvent::Switch(Switch {
                prev: pid(&self.prev_pid),
                prev_comm: r.str(&self.prev_comm),
                prev_state: r.int(&self.prev_state),
                prev_prio: r.int(&self.prev_prio) as i32,
                next: pid(&self.next_pid),
                next_comm: r.str(&self.next_comm),
                next_prio: r.int(&self.next_prio) as i32,
            }));
        }
        if let Some((_, target)) = self.waking.as_ref().filter(|w| w.0 == id) {
            let irq = in_interrupt(r.int(&self.flags) as u64);
            return Some(SchedEvent::Waking {
                waker: Some(r.pid()),
                target: pid(target),
                irq,
            });
        }
        if let Some((_, p, comm)) = self.rename.as_ref().filter(|e| e.0 == id) {
            return Some(SchedEvent::Rename {
                pid: pid(p),
                comm: r.str(comm),
            });
        }
        if let Some((_, p)) = self.migrate.as_ref().filter(|e| e.0 == id) {
            return Some(SchedEvent::Migrate { pid: pid(p) });
        }
        let (_, state, cpu) = self.frequency.as_ref().filter(|e| e.0 == id)?;
        Some(SchedEvent::Frequency {
            cpu: r.int(cpu) as usize,
            khz: r.int(state) as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracepoint::EVENTS;
    use crate::workload::replay::dat::PageLayout;

    /// A trace's metadata with the catalogue's event formats (the kernel's layouts).
    fn meta() -> Meta {
        let events = EVENTS
            .iter()
            .map(|f| (f.id, EventFormat::parse(f.system, &f.file()).unwrap()));
        Meta {
            version: 6,
            layout: PageLayout {
                size: 4096,
                commit: 8,
                long: 8,
                data: 16,
            },
            events: events.collect(),
            cmdlines: vec![],
            uname: None,
            clock: None,
            nr_cpus: 4,
            offset: 0,
            cpus: vec![],
        }
    }

    /// A record of event `name` in `pid`'s context with `fields` set.
    fn record(meta: &Meta, name: &str, pid: i32, fields: &[(&str, i64)]) -> Vec<u8> {
        let f = meta.events.values().find(|e| e.name == name).unwrap();
        let mut r = vec![0u8; 128];
        r[..2].copy_from_slice(&f.id.to_le_bytes());
        r[4..8].copy_from_slice(&pid.to_le_bytes());
        for &(name, v) in fields {
            let field = f.field(name).unwrap();
            r[field.offset..field.offset + field.size]
                .copy_from_slice(&v.to_le_bytes()[..field.size]);
        }
        r
    }

    #[test]
    fn records_read_as_scheduler_events() {
        let m = meta();
        let s = SchedFields::of(&m, "t.dat").unwrap();
        let sw = record(
            &m,
            "sched_switch",
            7,
            &[
                ("prev_pid", 7),
                ("prev_state", 1),
                ("prev_prio", 100),
                ("next_pid", 9),
                ("next_prio", 139),
            ],
        );
        let got = format!("{:?}", s.event(Record { data: &sw }).unwrap());
        assert_eq!(got, "Switch(Switch { prev: 7, prev_comm: \"\", prev_state: 1, prev_prio: 100, next: 9, next_comm: \"\", next_prio: 139 })");
        // A waking in a hard interrupt with interrupts off (0x09), and one in task context.
        for (flags, irq) in [(0x09, true), (0x01, false)] {
            let w = record(
                &m,
                "sched_waking",
                7,
                &[("common_flags", flags), ("pid", 9)],
            );
            let got = format!("{:?}", s.event(Record { data: &w }).unwrap());
            assert_eq!(
                got,
                format!("Waking {{ waker: Some(7), target: 9, irq: {irq} }}")
            );
        }
        let f = record(
            &m,
            "cpu_frequency",
            0,
            &[("state", 1_800_000), ("cpu_id", 3)],
        );
        let got = format!("{:?}", s.event(Record { data: &f }).unwrap());
        assert_eq!(got, "Frequency { cpu: 3, khz: 1800000 }");
        let other = record(&m, "sched_wakeup", 0, &[]);
        assert!(s.event(Record { data: &other }).is_none());
    }

    #[test]
    fn a_trace_without_sched_switch_is_refused() {
        let mut m = meta();
        m.events.retain(|_, e| e.name != "sched_switch");
        let err = SchedFields::of(&m, "t.dat").err().unwrap().to_string();
        assert_eq!(
            err,
            "t.dat: the trace has no sched_switch event (record it with -e sched)"
        );
    }
}
