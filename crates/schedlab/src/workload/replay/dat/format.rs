//! An event's format file (`/sys/kernel/tracing/events/<system>/<event>/format`, which
//! trace.dat keeps for every event it may hold): its id and the place, size and signedness
//! of each field, as libtraceevent's `tep_parse_event` reads them, and a record's fields.

/// What a field holds, from its declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer of the field's size (1, 2, 4 or 8 bytes).
    Int,
    /// `char name[N]`: a string of at most N bytes, NUL-terminated when shorter; `char
    /// name[]` (size 0, as `print`'s `buf`): the rest of the record.
    Chars,
    /// `__data_loc char[] name`: a u32 whose low 16 bits are the string's offset in the
    /// record and high 16 its length (with the NUL).
    DataLoc,
    /// Anything else (other arrays, structures): not read.
    Other,
}

/// A field of an event's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    pub kind: Kind,
}

/// An event's format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    pub system: String,
    pub name: String,
    pub id: u16,
    pub fields: Vec<Field>,
}

impl EventFormat {
    /// The format file `text` of an event of `system`; None if it has no name, id or fields.
    pub fn parse(system: &str, text: &str) -> Option<EventFormat> {
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        for line in text.lines() {
            if let Some(n) = line.strip_prefix("name: ") {
                name = Some(n.trim().to_string());
            } else if let Some(i) = line.strip_prefix("ID: ") {
                id = i.trim().parse().ok();
            } else if let Some(f) = line.trim_start().strip_prefix("field:") {
                fields.push(field(f)?);
            }
        }
        Some(EventFormat {
            system: system.to_string(),
            name: name?,
            id: id?,
            fields,
        })
    }

    /// Its field `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// `TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;` (after `field:`).
fn field(line: &str) -> Option<Field> {
    let mut parts = line.split(';').map(str::trim);
    let decl = parts.next()?;
    let mut number = |key: &str| -> Option<usize> { parts.next()?.strip_prefix(key)?.parse().ok() };
    let (offset, size) = (number("offset:")?, number("size:")?);
    let signed = number("signed:").unwrap_or(0) == 1;
    let last = decl.rsplit(' ').next()?;
    let (name, array) = match last.split_once('[') {
        Some((n, _)) => (n, true),
        None => (last, false),
    };
    let kind = if decl.starts_with("__data_loc") {
        Kind::DataLoc
    } else if array && decl.starts_with("char ") {
        Kind::Chars
    } else if !array && matches!(size, 1 | 2 | 4 | 8) {
        Kind::Int
    } else {
        Kind::Other
    };
    Some(Field {
        name: name.to_string(),
        offset,
        size,
        signed,
        kind,
    })
}

/// A record's bytes (little endian), read field by field; a field past the record's end
/// reads as 0 or "".
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub data: &'a [u8],
}

impl<'a> Record<'a> {
    /// `common_type`: the event's id.
    pub fn id(&self) -> u16 {
        self.uint(0, 2) as u16
    }

    /// `common_pid`.
    pub fn pid(&self) -> i32 {
        self.uint(4, 4) as i32
    }

    fn uint(&self, at: usize, size: usize) -> u64 {
        let Some(b) = self.data.get(at..at + size) else {
            return 0;
        };
        let mut w = [0u8; 8];
        w[..size].copy_from_slice(b);
        u64::from_le_bytes(w)
    }

    /// Integer field `f`, sign-extended if signed.
    pub fn int(&self, f: &Field) -> i64 {
        let x = self.uint(f.offset, f.size);
        let bits = 64 - 8 * f.size as u32;
        if f.signed {
            ((x << bits) as i64) >> bits
        } else {
            x as i64
        }
    }

    /// String field `f` (a char array or a `__data_loc` string), up to its NUL.
    pub fn str(&self, f: &Field) -> &'a str {
        let bytes = match f.kind {
            Kind::Chars if f.size == 0 => self.data.get(f.offset..),
            Kind::Chars => self.data.get(f.offset..f.offset + f.size),
            Kind::DataLoc => {
                let loc = self.uint(f.offset, 4);
                let (at, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
                self.data.get(at..at + len)
            }
            _ => None,
        };
        let bytes = bytes.unwrap_or_default();
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        std::str::from_utf8(&bytes[..end]).unwrap_or("")
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// sched_switch's format file as a 6.12 x86_64 kernel prints it.
    pub(in super::super) const SCHED_SWITCH: &str = "name: sched_switch\nID: 316\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
        \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
        \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
        \tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
        \tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
        \tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
        \tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
        \tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n\
        print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

    #[test]
    fn a_format_file_gives_each_fields_place() {
        let f = EventFormat::parse("sched", SCHED_SWITCH).unwrap();
        assert_eq!(
            (f.name.as_str(), f.id, f.fields.len()),
            ("sched_switch", 316, 11)
        );
        let comm = f.field("prev_comm").unwrap();
        assert_eq!((comm.offset, comm.size, comm.kind), (8, 16, Kind::Chars));
        let state = f.field("prev_state").unwrap();
        assert_eq!(
            (state.offset, state.size, state.signed, state.kind),
            (32, 8, true, Kind::Int)
        );
    }

    #[test]
    fn a_record_reads_its_fields() {
        let f = EventFormat::parse("sched", SCHED_SWITCH).unwrap();
        let mut rec = vec![0u8; 64];
        rec[..2].copy_from_slice(&316u16.to_le_bytes());
        rec[4..8].copy_from_slice(&42i32.to_le_bytes());
        rec[8..12].copy_from_slice(b"abcd");
        rec[24..28].copy_from_slice(&(-7i32).to_le_bytes());
        rec[32..40].copy_from_slice(&1024i64.to_le_bytes());
        rec[40..56].copy_from_slice(b"0123456789abcdef"); // all 16 bytes, no NUL
        let r = Record { data: &rec };
        assert_eq!((r.id(), r.pid()), (316, 42));
        assert_eq!(r.str(f.field("prev_comm").unwrap()), "abcd");
        assert_eq!(r.int(f.field("prev_pid").unwrap()), -7);
        assert_eq!(r.int(f.field("prev_state").unwrap()), 1024);
        assert_eq!(r.str(f.field("next_comm").unwrap()), "0123456789abcdef");
    }

    #[test]
    fn a_data_loc_string_is_found_by_its_offset_and_length() {
        let text = "name: x\nID: 9\nformat:\n\tfield:__data_loc char[] path;\toffset:8;\tsize:4;\tsigned:0;\n";
        let f = EventFormat::parse("s", text).unwrap();
        let mut rec = vec![0u8; 16];
        rec[8..12].copy_from_slice(&((3u32 << 16) | 12).to_le_bytes());
        rec[12..15].copy_from_slice(b"/a\0");
        let path = f.field("path").unwrap();
        assert_eq!(path.kind, Kind::DataLoc);
        assert_eq!(Record { data: &rec }.str(path), "/a");
        // `char buf[]`: to the record's end (its NUL).
        let text = "name: p\nID: 5\nformat:\n\tfield:char buf[];\toffset:12;\tsize:0;\tsigned:0;\n";
        let buf = EventFormat::parse("ftrace", text).unwrap().fields[0].clone();
        assert_eq!(Record { data: &rec }.str(&buf), "/a");
        // A location past the record reads as empty rather than panicking.
        rec[8..12].copy_from_slice(&((40u32 << 16) | 12).to_le_bytes());
        assert_eq!(Record { data: &rec }.str(path), "");
    }
}
