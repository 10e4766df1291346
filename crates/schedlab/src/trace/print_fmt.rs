//! An event's print fmt applied to its values, as `trace-cmd report` (libtraceevent) prints
//! a record's fields: the text trace's part after the event's name. Each print fmt is parsed
//! once into literal text and conversions, each conversion bound to the field its argument
//! reads. Simplified: the argument expressions are not evaluated; a conversion reads its
//! field, and `sched_switch`'s two `prev_state` expressions are recognised by their
//! `__print_flags` table and their `"+"`.

use crate::tracepoint::{Format, Ty, Val};

/// How a conversion prints its field.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Conv {
    /// `%s` of a string.
    Str,
    /// `%d`, `%lld`, …: decimal.
    Signed,
    /// `%u`, `%lu`, …, or any of an unsigned field.
    Unsigned,
    /// `%03d`: decimal, zero-padded to the width.
    Padded(usize),
    /// `%s` of `__print_flags(value & mask, "|", { flag, "name" }, …) : default`: its
    /// table's index.
    Flags(usize),
    /// `%s` of `value & bit ? "+" : ""`.
    Plus(u64),
    /// `%ps`: the kernel symbol at the address.
    Symbol,
}

/// `__print_flags`' table, and the text when no flag is set.
#[derive(Debug, Clone, PartialEq)]
struct FlagTable {
    flags: Vec<(u64, &'static str)>,
    default: &'static str,
}

/// A piece of the printed text: literal text, then a field.
#[derive(Debug, Clone, PartialEq)]
struct Seg {
    text: &'static str,
    field: usize,
    conv: Conv,
}

/// One event's print fmt, parsed.
#[derive(Debug, Clone)]
pub struct PrintFmt {
    segs: Vec<Seg>,
    /// The text after the last field.
    tail: &'static str,
    /// The `__print_flags` tables.
    tables: Vec<FlagTable>,
}

impl PrintFmt {
    /// Parse `f`'s print fmt (`"format", arg, arg, …`).
    pub fn of(f: &'static Format) -> PrintFmt {
        let (text, args) = split_fmt(f.print_fmt);
        let mut args = args.into_iter();
        let (mut segs, mut tables) = (Vec::new(), Vec::new());
        let mut rest = text;
        while let Some(at) = rest.find('%') {
            let text = &rest[..at];
            let spec_len = rest[at + 1..]
                .find(|c: char| c.is_ascii_alphabetic() && !"hl".contains(c))
                .expect("a conversion")
                + 2;
            let mut spec = &rest[at + 1..at + spec_len];
            rest = &rest[at + spec_len..];
            if spec == "p" && rest.starts_with('s') {
                (spec, rest) = ("ps", &rest[1..]);
            }
            let arg = args.next().expect("an argument per conversion");
            let field = field_of(f, arg);
            let conv = match arg.find("__print_flags(") {
                Some(at) if spec == "s" => {
                    tables.push(flags(&arg[at..]));
                    Conv::Flags(tables.len() - 1)
                }
                _ => conv(spec, arg, f.fields[field].1),
            };
            segs.push(Seg { text, field, conv });
        }
        PrintFmt {
            segs,
            tail: rest,
            tables,
        }
    }

    /// Append the fields `vals` as the print fmt prints them.
    #[inline]
    pub fn render(&self, line: &mut String, vals: &[Val], ksym: impl Fn(u64) -> &'static str) {
        for Seg { text, field, conv } in &self.segs {
            line.push_str(text);
            match (*conv, vals[*field]) {
                (Conv::Str, Val::S(s)) => line.push_str(s),
                (Conv::Signed, Val::I(x)) => line.push_str(itoa::Buffer::new().format(x)),
                (Conv::Unsigned, Val::I(x)) => line.push_str(itoa::Buffer::new().format(x as u64)),
                (Conv::Padded(width), Val::I(x)) => {
                    let mut buf = itoa::Buffer::new();
                    let digits = buf.format(x);
                    for _ in digits.len()..width {
                        line.push('0');
                    }
                    line.push_str(digits);
                }
                (Conv::Flags(t), Val::I(x)) => {
                    let t = &self.tables[t];
                    let mut set = t.flags.iter().filter(|(bit, _)| x as u64 & bit != 0);
                    match set.next() {
                        Some((_, name)) => line.push_str(name),
                        None => line.push_str(t.default),
                    }
                    for (_, name) in set {
                        line.push('|');
                        line.push_str(name);
                    }
                }
                (Conv::Plus(bit), Val::I(x)) => {
                    if x as u64 & bit != 0 {
                        line.push('+');
                    }
                }
                (Conv::Symbol, Val::I(x)) => line.push_str(ksym(x as u64)),
                _ => debug_assert!(false, "a value of the wrong kind for {conv:?}"),
            }
        }
        line.push_str(self.tail);
    }
}

/// The format string and the arguments of a print fmt: `"…", a, b(c, d), …`.
fn split_fmt(fmt: &'static str) -> (&'static str, Vec<&'static str>) {
    let body = fmt.strip_prefix('"').expect("a quoted format");
    let end = body.find('"').expect("the format's closing quote");
    let mut args = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, end + 1);
    let tail = &body[end + 1..];
    for (i, c) in tail.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '{' if !quoted => depth += 1,
            ')' | '}' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                if i > 0 {
                    args.push(body[start..end + 1 + i].trim());
                }
                start = end + 2 + i;
            }
            _ => {}
        }
    }
    args.push(body[start..].trim());
    (&body[..end], args)
}

/// The field an argument reads: the first `REC->name` or `__get_str(name)` in it.
fn field_of(f: &Format, arg: &str) -> usize {
    let name = ["REC->", "__get_str("]
        .iter()
        .filter_map(|p| arg.find(p).map(|at| &arg[at + p.len()..]))
        .min_by_key(|rest| arg.len() - rest.len())
        .and_then(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
        })
        .unwrap_or_else(|| panic!("{}: no field in {arg:?}", f.name));
    (f.fields.iter().position(|(n, _)| *n == name))
        .unwrap_or_else(|| panic!("{}: no field {name}", f.name))
}

/// How conversion `spec` (`d`, `03d`, `lu`, `s`, `ps`, …) prints argument `arg` of type `ty`.
fn conv(spec: &str, arg: &'static str, ty: Ty) -> Conv {
    if spec == "ps" {
        return Conv::Symbol;
    }
    if spec.ends_with('s') {
        if arg.contains("? \"+\"") {
            return Conv::Plus(plus_bit(arg));
        }
        return Conv::Str;
    }
    if let Some(w) = spec.strip_prefix('0') {
        let w = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        return Conv::Padded(w.parse().expect("a width"));
    }
    if spec.ends_with('u') || matches!(ty, Ty::Int(_, _, false)) {
        Conv::Unsigned
    } else {
        Conv::Signed
    }
}

/// `__print_flags(…, "|", { 0x1, "S" }, …) : "R"`: the table, and the text when no flag
/// is set.
fn flags(arg: &'static str) -> FlagTable {
    let flags = arg
        .split('{')
        .skip(1)
        .map(|entry| {
            let (bit, name) = entry.split_once(',').expect("{ flag, \"name\" }");
            let bit = u64::from_str_radix(bit.trim().trim_start_matches("0x"), 16);
            let name = name.split('"').nth(1).expect("a quoted name");
            (bit.expect("a hexadecimal flag"), name)
        })
        .collect();
    let default = arg.rsplit(':').next().and_then(|d| d.split('"').nth(1));
    FlagTable {
        flags,
        default: default.expect("a default after ':'"),
    }
}

/// `value & (((A | B | …) + 1) << 1) ? "+" : ""`: the bit tested.
fn plus_bit(arg: &str) -> u64 {
    let mask = arg
        .split(|c: char| !(c.is_ascii_hexdigit() || c == 'x'))
        .filter_map(|w| w.strip_prefix("0x"))
        .map(|h| u64::from_str_radix(h, 16).expect("a hexadecimal flag"))
        .fold(0, |m, b| m | b);
    (mask + 1) << 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracepoint::{TraceEvent, Val::I, Val::S};

    fn print(ev: TraceEvent, vals: &[Val]) -> String {
        let mut line = String::new();
        PrintFmt::of(ev.format()).render(&mut line, vals, |_| "tracing_mark_write");
        line
    }

    #[test]
    fn the_switch_state_prints_as_trace_cmd_decodes_it() {
        // TASK_REPORT_MAX is 0x100: a preempted kernel task prints "R+", a sleeper "S",
        // an exiting one "X", two flags "S|D".
        let vals = |state| [S("a"), I(1), I(120), I(state), S("b"), I(2), I(100)];
        let line = print(TraceEvent::SchedSwitch, &vals(0x1));
        assert_eq!(
            line,
            "prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=100"
        );
        for (state, text) in [(0, "=R "), (0x100, "=R+ "), (0x10, "=X "), (0x3, "=S|D ")] {
            assert!(print(TraceEvent::SchedSwitch, &vals(state)).contains(text));
        }
    }

    #[test]
    fn widths_signs_and_symbols_follow_the_conversions() {
        let wake = print(TraceEvent::SchedWaking, &[S("t"), I(7), I(120), I(3)]);
        assert_eq!(wake, "comm=t pid=7 prio=120 target_cpu=003");
        // cpu_idle's u32 state of PWR_EVENT_EXIT prints as %lu: 4294967295.
        let idle = print(TraceEvent::CpuIdle, &[I(u32::MAX as i64), I(1)]);
        assert_eq!(idle, "state=4294967295 cpu_id=1");
        let pelt = [I(9), I(1), I(2), I(3), I(0), I(-1), S("/a"), S("(null)")];
        assert_eq!(
            print(TraceEvent::SchedPeltSe, &pelt),
            "cpu=0 path=/a comm=(null) pid=-1 load=1 runnable=2 util=3 update_time=9"
        );
        let mark = print(TraceEvent::Print, &[I(0), S("rtapp_loop: event=start")]);
        assert_eq!(mark, "tracing_mark_write: rtapp_loop: event=start");
    }
}
