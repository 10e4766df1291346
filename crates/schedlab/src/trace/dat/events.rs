//! The catalogue's events in binary: each event's `format` file (what
//! `/sys/kernel/tracing/events/<system>/<event>/format` prints: `trace_define_field` for
//! every field, then the print fmt) and the encoding of its records to that layout.

use std::fmt::Write as _;

use smallvec::SmallVec;

use crate::sched::task::{kernel_comm, TASK_COMM_LEN};
use crate::tracepoint::{Format, Ty, Val};

/// `struct trace_entry`: every record starts with these (8 bytes).
const COMMON: [(&str, Ty); 4] = [
    ("common_type", Ty::Int("unsigned short", 2, false)),
    ("common_flags", Ty::Int("unsigned char", 1, false)),
    ("common_preempt_count", Ty::Int("unsigned char", 1, false)),
    ("common_pid", Ty::Int("int", 4, true)),
];
const COMMON_SIZE: usize = 8;

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

    /// Write its record in `pid`'s context with `flags` into `out` (zeroed, `size` bytes):
    /// the common fields, then `vals` in field order, then the dynamic strings.
    pub fn write(&self, layout: &Layout, out: &mut [u8], (pid, flags): (u32, u8), vals: &[Val]) {
        debug_assert_eq!(
            vals.len(),
            self.fields.len() + self.extras.len(),
            "{}",
            self.name
        );
        out[..2].copy_from_slice(&self.id.to_le_bytes());
        out[2] = flags;
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

    use crate::tracepoint::EVENTS;

    fn event(name: &str) -> &'static Format {
        EVENTS.iter().find(|f| f.name == name).unwrap()
    }

    fn encode(f: &Format, pid: u32, vals: &[Val]) -> Vec<u8> {
        let layout = f.layout();
        let mut rec = vec![0; f.size(&layout, vals)];
        f.write(&layout, &mut rec, (pid, 0), vals);
        rec
    }

    #[test]
    fn every_layout_fits() {
        for f in EVENTS.iter() {
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
        // words at 48 and 52, so the strings start at 56: "(null)\0" (7 bytes) then "t\0",
        // and end the record.
        let vals = [
            Val::I(1),
            Val::I(2),
            Val::I(3),
            Val::I(4),
            Val::I(5),
            Val::I(-1),
            Val::S("(null)"),
            Val::S("t"),
            Val::I(-1), // the extras, subject_pid and path_id, which the record leaves out
            Val::I(7),
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
