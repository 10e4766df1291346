//! The events' binary layouts: each event's `format` file (what
//! `/sys/kernel/tracing/events/<system>/<event>/format` prints: `trace_define_field` for
//! every field, then the print fmt) and the encoding of its records to that layout.
//! Layouts are 6.12's (x86_64, `-funsigned-char`); the PELT, util_est, capacity and
//! overutilized events are the LISA module's (sched_tp field order, with `runnable`);
//! schedlab's deadline events have no kernel counterpart.

use std::fmt::Write as _;

use smallvec::SmallVec;

use crate::sched::task::{kernel_comm, TASK_COMM_LEN};

/// The C type of a field, as the format file declares it.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// An integer: its C type name, size in bytes, signedness.
    Int(&'static str, u8, bool),
    /// `char name[16]` (`TASK_COMM_LEN`).
    Comm,
    /// `__data_loc char[] name`: a u32 of (length << 16 | offset) to a string after the
    /// fixed part.
    Str,
    /// `char name[]`: the rest of the record (`print`'s buffer).
    Buf,
}

const PID: Ty = Ty::Int("pid_t", 4, true);
const INT: Ty = Ty::Int("int", 4, true);
const U32: Ty = Ty::Int("u32", 4, false);
const UINT: Ty = Ty::Int("unsigned int", 4, false);
const LONG: Ty = Ty::Int("long", 8, true);
const ULONG: Ty = Ty::Int("unsigned long", 8, false);
const ULL: Ty = Ty::Int("unsigned long long", 8, false);
const S64: Ty = Ty::Int("s64", 8, true);
const U64: Ty = Ty::Int("u64", 8, false);
const SHORT: Ty = Ty::Int("short", 2, true);
const BOOL: Ty = Ty::Int("bool", 1, false);

impl Ty {
    fn size(self) -> usize {
        match self {
            Ty::Int(_, size, _) => size as usize,
            Ty::Comm => TASK_COMM_LEN,
            Ty::Str => 4,
            Ty::Buf => 0,
        }
    }

    fn align(self) -> usize {
        match self {
            Ty::Comm | Ty::Buf => 1,
            t => t.size(),
        }
    }
}

/// One event's format.
#[derive(Debug)]
pub struct Format {
    pub system: &'static str,
    pub name: &'static str,
    pub id: u16,
    pub fields: &'static [(&'static str, Ty)],
    pub print_fmt: &'static str,
}

/// `struct trace_entry`: every record starts with these (8 bytes).
const COMMON: [(&str, Ty); 4] = [
    ("common_type", Ty::Int("unsigned short", 2, false)),
    ("common_flags", Ty::Int("unsigned char", 1, false)),
    ("common_preempt_count", Ty::Int("unsigned char", 1, false)),
    ("common_pid", INT),
];
const COMMON_SIZE: usize = 8;

/// `__trace_sched_switch_state`'s encoding, as the print fmt decodes it (`TASK_REPORT_MAX`
/// marks a preemption in kernel mode: "R+").
const SWITCH_FMT: &str = concat!(
    "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", ",
    "REC->prev_comm, REC->prev_pid, REC->prev_prio, ",
    "(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? ",
    "__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", ",
    "{ 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", ",
    "REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", ",
    "REC->next_comm, REC->next_pid, REC->next_prio"
);

const WAKEUP_FIELDS: &[(&str, Ty)] = &[
    ("comm", Ty::Comm),
    ("pid", PID),
    ("prio", INT),
    ("target_cpu", INT),
];
const WAKEUP_FMT: &str =
    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu";
/// The LISA module's `sched_pelt_rq_template` (`sched_pelt_rt`, `sched_pelt_dl`).
const PELT_RQ_FIELDS: &[(&str, Ty)] = &[
    ("update_time", ULL),
    ("load", ULONG),
    ("runnable", ULONG),
    ("util", ULONG),
    ("cpu", INT),
];
const PELT_RQ_FMT: &str = "\"cpu=%d load=%lu runnable=%lu util=%lu update_time=%llu\", REC->cpu, REC->load, REC->runnable, REC->util, REC->update_time";
const CPU_FIELDS: &[(&str, Ty)] = &[("state", U32), ("cpu_id", U32)];
const CPU_FMT: &str =
    "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id";

/// The `ftrace` system's `print` (`TRACE_PRINT`): what a write to trace_marker records.
pub static PRINT: Format = Format {
    system: "ftrace",
    name: "print",
    id: 5,
    fields: &[("ip", ULONG), ("buf", Ty::Buf)],
    print_fmt: "\"%ps: %s\", (void *)REC->ip, REC->buf",
};

/// Every event schedlab records but `print`, by `TraceEvent` code (ids from 300, in code
/// order, as a kernel numbers its events dynamically).
pub static EVENTS: [Format; 23] = [
    Format {
        system: "sched",
        name: "sched_switch",
        id: 300,
        fields: &[
            ("prev_comm", Ty::Comm),
            ("prev_pid", PID),
            ("prev_prio", INT),
            ("prev_state", LONG),
            ("next_comm", Ty::Comm),
            ("next_pid", PID),
            ("next_prio", INT),
        ],
        print_fmt: SWITCH_FMT,
    },
    Format {
        system: "sched",
        name: "sched_waking",
        id: 301,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
    },
    Format {
        system: "sched",
        name: "sched_wakeup",
        id: 302,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
    },
    Format {
        system: "sched",
        name: "sched_wakeup_new",
        id: 303,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
    },
    Format {
        system: "sched",
        name: "sched_migrate_task",
        id: 304,
        fields: &[
            ("comm", Ty::Comm),
            ("pid", PID),
            ("prio", INT),
            ("orig_cpu", INT),
            ("dest_cpu", INT),
        ],
        print_fmt: "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu",
    },
    Format {
        system: "sched",
        name: "sched_process_fork",
        id: 305,
        fields: &[
            ("parent_comm", Ty::Comm),
            ("parent_pid", PID),
            ("child_comm", Ty::Comm),
            ("child_pid", PID),
        ],
        print_fmt: "\"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid",
    },
    Format {
        system: "sched",
        name: "sched_process_exit",
        id: 306,
        fields: &[("comm", Ty::Comm), ("pid", PID), ("prio", INT)],
        print_fmt: "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio",
    },
    Format {
        system: "task",
        name: "task_rename",
        id: 307,
        fields: &[
            ("pid", PID),
            ("oldcomm", Ty::Comm),
            ("newcomm", Ty::Comm),
            ("oom_score_adj", SHORT),
        ],
        print_fmt: "\"pid=%d oldcomm=%s newcomm=%s oom_score_adj=%hd\", REC->pid, REC->oldcomm, REC->newcomm, REC->oom_score_adj",
    },
    Format {
        system: "power",
        name: "cpu_idle",
        id: 308,
        fields: CPU_FIELDS,
        print_fmt: CPU_FMT,
    },
    Format {
        system: "power",
        name: "cpu_frequency",
        id: 309,
        fields: CPU_FIELDS,
        print_fmt: CPU_FMT,
    },
    Format {
        system: "lisa",
        name: "sched_cpu_capacity",
        id: 310,
        fields: &[
            ("cpu", INT),
            ("capacity", ULONG),
            ("capacity_orig", ULONG),
            ("capacity_curr", ULONG),
        ],
        print_fmt: "\"cpu=%d capacity=%lu capacity_orig=%lu capacity_curr=%lu\", REC->cpu, REC->capacity, REC->capacity_orig, REC->capacity_curr",
    },
    // `print` has its own id: this slot keeps the codes aligned (`format` skips it).
    Format {
        system: "ftrace",
        name: "print",
        id: 5,
        fields: &[],
        print_fmt: "",
    },
    Format {
        system: "schedlab",
        name: "sched_dl_throttle",
        id: 312,
        fields: &[("comm", Ty::Comm), ("pid", PID), ("cpu", INT), ("runtime", S64)],
        print_fmt: "\"comm=%s pid=%d cpu=%d runtime=%lld\", REC->comm, REC->pid, REC->cpu, REC->runtime",
    },
    Format {
        system: "schedlab",
        name: "sched_dl_replenish",
        id: 313,
        fields: &[
            ("comm", Ty::Comm),
            ("pid", PID),
            ("cpu", INT),
            ("runtime", S64),
            ("deadline", U64),
        ],
        print_fmt: "\"comm=%s pid=%d cpu=%d runtime=%lld deadline=%llu\", REC->comm, REC->pid, REC->cpu, REC->runtime, REC->deadline",
    },
    Format {
        system: "schedlab",
        name: "sched_dl_miss",
        id: 314,
        fields: &[("comm", Ty::Comm), ("pid", PID), ("cpu", INT), ("deadline", U64)],
        print_fmt: "\"comm=%s pid=%d cpu=%d deadline=%llu\", REC->comm, REC->pid, REC->cpu, REC->deadline",
    },
    Format {
        system: "sched",
        name: "sched_pi_setprio",
        id: 315,
        fields: &[
            ("comm", Ty::Comm),
            ("pid", PID),
            ("oldprio", INT),
            ("newprio", INT),
        ],
        print_fmt: "\"comm=%s pid=%d oldprio=%d newprio=%d\", REC->comm, REC->pid, REC->oldprio, REC->newprio",
    },
    Format {
        system: "lisa",
        name: "sched_overutilized",
        id: 316,
        fields: &[("overutilized", BOOL), ("span", Ty::Str)],
        print_fmt: "\"overutilized=%d span=0x%s\", REC->overutilized, __get_str(span)",
    },
    Format {
        system: "lisa",
        name: "sched_pelt_se",
        id: 317,
        fields: &[
            ("update_time", ULL),
            ("load", ULONG),
            ("runnable", ULONG),
            ("util", ULONG),
            ("cpu", INT),
            ("pid", INT),
            ("path", Ty::Str),
            ("comm", Ty::Str),
        ],
        print_fmt: "\"cpu=%d path=%s comm=%s pid=%d load=%lu runnable=%lu util=%lu update_time=%llu\", REC->cpu, __get_str(path), __get_str(comm), REC->pid, REC->load, REC->runnable, REC->util, REC->update_time",
    },
    Format {
        system: "lisa",
        name: "sched_pelt_cfs",
        id: 318,
        fields: &[
            ("update_time", ULL),
            ("load", ULONG),
            ("runnable", ULONG),
            ("util", ULONG),
            ("cpu", INT),
            ("path", Ty::Str),
        ],
        print_fmt: "\"cpu=%d path=%s load=%lu runnable=%lu util=%lu update_time=%llu\", REC->cpu, __get_str(path), REC->load, REC->runnable, REC->util, REC->update_time",
    },
    Format {
        system: "lisa",
        name: "sched_util_est_se",
        id: 319,
        fields: &[
            ("util", ULONG),
            ("enqueued", UINT),
            ("ewma", UINT),
            ("cpu", INT),
            ("pid", INT),
            ("path", Ty::Str),
            ("comm", Ty::Str),
        ],
        print_fmt: "\"cpu=%d path=%s comm=%s pid=%d enqueued=%u ewma=%u util=%lu\", REC->cpu, __get_str(path), __get_str(comm), REC->pid, REC->enqueued, REC->ewma, REC->util",
    },
    Format {
        system: "lisa",
        name: "sched_util_est_cfs",
        id: 320,
        fields: &[
            ("util", ULONG),
            ("enqueued", UINT),
            ("ewma", UINT),
            ("cpu", INT),
            ("path", Ty::Str),
        ],
        print_fmt: "\"cpu=%d path=%s enqueued=%u ewma=%u util=%lu\", REC->cpu, __get_str(path), REC->enqueued, REC->ewma, REC->util",
    },
    Format {
        system: "lisa",
        name: "sched_pelt_rt",
        id: 321,
        fields: PELT_RQ_FIELDS,
        print_fmt: PELT_RQ_FMT,
    },
    Format {
        system: "lisa",
        name: "sched_pelt_dl",
        id: 322,
        fields: PELT_RQ_FIELDS,
        print_fmt: PELT_RQ_FMT,
    },
];

/// A field's value.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    I(i64),
    S(&'a str),
}

/// A fixed field's offset: the C layout of `struct trace_event_raw_<event>`.
fn offsets_of<'a>(fields: &'a [(&'static str, Ty)]) -> impl Iterator<Item = usize> + 'a {
    let mut at = COMMON_SIZE;
    fields.iter().map(move |&(_, ty)| {
        at = at.next_multiple_of(ty.align());
        let o = at;
        at += ty.size();
        o
    })
}

impl Format {
    /// The size of the fixed part (what `sizeof` gives: padded to the largest alignment).
    fn fixed_size(&self) -> usize {
        let align = self.fields.iter().map(|f| f.1.align()).fold(4, usize::max);
        let end = offsets_of(self.fields)
            .zip(self.fields)
            .map(|(o, f)| o + f.1.size())
            .last()
            .unwrap_or(COMMON_SIZE);
        end.next_multiple_of(align)
    }

    /// The format file's text.
    pub fn file(&self) -> String {
        let mut s = format!("name: {}\nID: {}\nformat:\n", self.name, self.id);
        for (&(name, ty), o) in COMMON.iter().zip([0, 2, 3, 4]) {
            field_line(&mut s, name, ty, o);
        }
        s.push('\n');
        for (&(name, ty), o) in self.fields.iter().zip(offsets_of(self.fields)) {
            field_line(&mut s, name, ty, o);
        }
        let _ = writeln!(s, "\nprint fmt: {}", self.print_fmt);
        s
    }

    /// Where its fields are.
    pub fn layout(&self) -> Layout {
        assert!(
            self.fields.len() <= MAX_FIELDS,
            "{}: too many fields",
            self.name
        );
        let mut offsets = [0; MAX_FIELDS];
        for (o, at) in offsets.iter_mut().zip(offsets_of(self.fields)) {
            *o = at as u16;
        }
        let strings = self.fields.iter().enumerate();
        let strings = strings.filter(|(_, f)| matches!(f.1, Ty::Str | Ty::Buf));
        Layout {
            offsets,
            fixed: self.fixed_size(),
            strings: strings.map(|(i, _)| i as u8).collect(),
        }
    }

    /// The size of its record with `vals`: the fixed part, then the strings.
    pub fn size(&self, layout: &Layout, vals: &[Val]) -> usize {
        let string = |&i: &u8| match vals[i as usize] {
            Val::S(s) => s.len() + 1,
            Val::I(_) => 0,
        };
        layout.fixed + layout.strings.iter().map(string).sum::<usize>()
    }

    /// Write its record in `pid`'s context into `out` (zeroed, `size` bytes): the common
    /// fields, then `vals` in field order, then the dynamic strings.
    pub fn write(&self, layout: &Layout, out: &mut [u8], pid: u32, vals: &[Val]) {
        debug_assert_eq!(vals.len(), self.fields.len(), "{}", self.name);
        out[..2].copy_from_slice(&self.id.to_le_bytes());
        out[4..8].copy_from_slice(&(pid as i32).to_le_bytes());
        let mut tail = layout.fixed;
        for ((&(_, ty), &o), v) in self.fields.iter().zip(&layout.offsets).zip(vals) {
            let at = o as usize;
            match (ty, *v) {
                (Ty::Int(_, size, _), Val::I(x)) => put_int(out, at, size, x),
                (Ty::Comm, Val::S(s)) => {
                    let s = kernel_comm(s);
                    out[at..at + s.len()].copy_from_slice(s.as_bytes());
                }
                (Ty::Str | Ty::Buf, Val::S(s)) => {
                    let len = s.len() + 1;
                    if matches!(ty, Ty::Str) {
                        let loc = ((len as u32) << 16) | tail as u32;
                        out[at..at + 4].copy_from_slice(&loc.to_le_bytes());
                    }
                    out[tail..tail + s.len()].copy_from_slice(s.as_bytes());
                    tail += len;
                }
                _ => debug_assert!(false, "{}: a value of the wrong kind", self.name),
            }
        }
    }
}

/// Write `x`'s `size` low bytes at `at`, little endian (fixed-size stores: no copy loop).
#[inline(always)]
fn put_int(out: &mut [u8], at: usize, size: u8, x: i64) {
    match size {
        1 => out[at] = x as u8,
        2 => out[at..at + 2].copy_from_slice(&(x as u16).to_le_bytes()),
        4 => out[at..at + 4].copy_from_slice(&(x as u32).to_le_bytes()),
        _ => out[at..at + 8].copy_from_slice(&x.to_le_bytes()),
    }
}

/// The most fields an event has.
const MAX_FIELDS: usize = 8;

/// Where an event's fields are, computed once: their offsets, the fixed part's size, and
/// which fields are strings (after the fixed part).
#[derive(Debug, Clone)]
pub struct Layout {
    offsets: [u16; MAX_FIELDS],
    fixed: usize,
    strings: SmallVec<[u8; 2]>,
}

/// A field's line in a format file (`trace_define_field`'s declaration, as
/// `f_show` prints it).
fn field_line(s: &mut String, name: &str, ty: Ty, offset: usize) {
    let _ = match ty {
        Ty::Int(c, _, _) => write!(s, "\tfield:{c} {name};"),
        Ty::Comm => write!(s, "\tfield:char {name}[{TASK_COMM_LEN}];"),
        Ty::Str => write!(s, "\tfield:__data_loc char[] {name};"),
        Ty::Buf => write!(s, "\tfield:char {name}[];"),
    };
    let signed = matches!(ty, Ty::Int(_, _, true)) as u8;
    let _ = writeln!(
        s,
        "\toffset:{offset};\tsize:{};\tsigned:{signed};",
        ty.size()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(name: &str) -> &'static Format {
        EVENTS.iter().find(|f| f.name == name).unwrap()
    }

    fn encode(f: &Format, pid: u32, vals: &[Val]) -> Vec<u8> {
        let layout = f.layout();
        let mut rec = vec![0; f.size(&layout, vals)];
        f.write(&layout, &mut rec, pid, vals);
        rec
    }

    #[test]
    fn every_layout_fits() {
        for f in EVENTS.iter().chain([&PRINT]) {
            f.layout();
        }
    }

    #[test]
    fn sched_switch_has_the_kernel_layout() {
        // `struct trace_event_raw_sched_switch` on x86_64: comm[16] after the 8-byte
        // trace_entry, the long aligned to 8 (a 6.12 format file's lines).
        let file = event("sched_switch").file();
        for line in [
            "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;",
            "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;",
            "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;",
            "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;",
            "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;",
            "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;",
            "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;",
            "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;",
            "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;",
        ] {
            assert!(file.contains(line), "{line} not in\n{file}");
        }
        assert!(file.starts_with("name: sched_switch\nID: 300\nformat:\n"));
    }

    #[test]
    fn strings_follow_the_fixed_part() {
        // sched_pelt_se: 4 u64s at 8..40, cpu and pid at 40 and 44, the two __data_loc
        // words at 48 and 52, so the strings start at 56: "(null)\0" (7 bytes) then "t\0".
        let vals = [
            Val::I(1),
            Val::I(2),
            Val::I(3),
            Val::I(4),
            Val::I(5),
            Val::I(-1),
            Val::S("(null)"),
            Val::S("t"),
        ];
        let rec = encode(event("sched_pelt_se"), 42, &vals);
        let word = |at: usize| u32::from_le_bytes(rec[at..at + 4].try_into().unwrap());
        assert_eq!(&rec[..2], &317u16.to_le_bytes());
        assert_eq!(word(4), 42);
        assert_eq!(word(44) as i32, -1);
        assert_eq!(word(48), (7 << 16) | 56);
        assert_eq!(word(52), (2 << 16) | 63);
        assert_eq!(&rec[56..], b"(null)\0t\0");
    }

    #[test]
    fn a_comm_is_cut_to_fifteen_bytes() {
        let vals = [Val::S("surfaceflinger-0"), Val::I(1), Val::I(120)];
        let rec = encode(event("sched_process_exit"), 1, &vals);
        assert_eq!(&rec[8..24], b"surfaceflinger-\0");
    }
}
