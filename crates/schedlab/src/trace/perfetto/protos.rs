//! The messages of Perfetto's trace format that schedlab writes, as field numbers of
//! `protos/perfetto/trace/perfetto_trace.proto` (Apache-2.0), and a writer that appends
//! them to a buffer in protobuf's wire format without building message objects: as
//! Perfetto's own protozero does, a nested message's length is a 4-byte redundant varint
//! patched once its fields are written (shrunk to one byte when it fits). (A message library would build an object, with
//! its strings, per event: this writer allocates nothing.)

/// Protobuf's wire types.
pub const VARINT: u32 = 0;
pub const I64: u32 = 1;
pub const LEN: u32 = 2;
pub const I32: u32 = 5;

/// Append `v` as a base-128 varint.
#[inline(always)]
fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// The bytes `varint` writes for `v`.
fn varint_size(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// The bytes a nested message's length takes: one under 128, else a redundant 4-byte varint.
fn length_size(len: usize) -> usize {
    if len < 0x80 {
        1
    } else {
        LENGTH_BYTES
    }
}

/// Write a nested message's length where `length_size` bytes were made for it.
fn put_length(at: &mut [u8], len: usize) {
    if len < 0x80 {
        at[0] = len as u8;
        return;
    }
    debug_assert!(len < 1 << 28, "a nested message over 256 MiB");
    for (i, b) in at[..LENGTH_BYTES].iter_mut().enumerate() {
        let more = if i + 1 < LENGTH_BYTES { 0x80 } else { 0 };
        *b = ((len >> (7 * i)) & 0x7f) as u8 | more;
    }
}

/// The bytes a nested message's tag and length take before its `len` bytes.
pub fn head_size(field: u32, len: usize) -> usize {
    varint_size(((field << 3) | LEN) as u64) + length_size(len)
}

/// The bytes a varint field takes.
pub fn uint_size(field: u32, v: u64) -> usize {
    varint_size(((field << 3) | VARINT) as u64) + varint_size(v)
}

/// `Trace`.
pub const TRACE_PACKET: u32 = 1;

/// `TracePacket` (its data is a `oneof`: one of the message fields).
pub mod packet {
    pub const SYSTEM_INFO: u32 = 45;
    pub const CPU_INFO: u32 = 67;
    pub const TIMESTAMP: u32 = 8;
    pub const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const FTRACE_EVENTS: u32 = 1;
    pub const PROCESS_TREE: u32 = 2;
    pub const TRACK_EVENT: u32 = 11;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    /// `SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
    pub const SEQ_INCREMENTAL_STATE_CLEARED: u64 = 1;
}

/// `FtraceEventBundle`.
pub mod bundle {
    pub const CPU: u32 = 1;
    pub const EVENT: u32 = 2;
    /// Android's compact encoding of switches and wakings (`CompactSched`, below).
    pub const COMPACT_SCHED: u32 = 4;
}

/// `FtraceEventBundle.CompactSched`: a bundle's switches and wakings as parallel packed
/// lists, each list's times delta-encoded, the comms interned.
pub mod compact {
    pub const SWITCH_TIMESTAMP: u32 = 1;
    pub const SWITCH_PREV_STATE: u32 = 2;
    pub const SWITCH_NEXT_PID: u32 = 3;
    pub const SWITCH_NEXT_PRIO: u32 = 4;
    pub const INTERN_TABLE: u32 = 5;
    pub const SWITCH_NEXT_COMM_INDEX: u32 = 6;
    pub const WAKING_TIMESTAMP: u32 = 7;
    pub const WAKING_PID: u32 = 8;
    pub const WAKING_COMM_INDEX: u32 = 11;
    pub const WAKING_COMMON_FLAGS: u32 = 12;
}

/// `FtraceEvent`: the time, the pid of the context, then one event (`oneof`: the
/// catalogue's `PerfettoEvent`).
pub mod ftrace {
    pub const TIMESTAMP: u32 = 1;
    pub const PID: u32 = 2;
    pub const COMMON_FLAGS: u32 = 5;
}

/// `ProcessTree` with its `Process` and `Thread`.
pub mod tree {
    pub const PROCESSES: u32 = 1;
    pub const THREADS: u32 = 2;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_PPID: u32 = 2;
    pub const PROCESS_CMDLINE: u32 = 3;
    pub const THREAD_TID: u32 = 1;
    pub const THREAD_NAME: u32 = 2;
    pub const THREAD_TGID: u32 = 3;
}

/// `TrackDescriptor`, with `ProcessDescriptor`, `ThreadDescriptor`, `CounterDescriptor`.
/// `SystemInfo`, its `Utsname`, and `CpuInfo`.
pub mod system {
    pub const UTSNAME: u32 = 1;
    pub const NUM_CPUS: u32 = 8;
    pub const SYSNAME: u32 = 1;
    pub const VERSION: u32 = 2;
    pub const RELEASE: u32 = 3;
    pub const CPUS: u32 = 1;
    pub const PROCESSOR: u32 = 1;
    pub const FREQUENCIES: u32 = 2;
    pub const CAPACITY: u32 = 3;
}

pub mod track {
    pub const UUID: u32 = 1;
    pub const PARENT_UUID: u32 = 5;
    pub const NAME: u32 = 2;
    /// `CounterDescriptor.unit_name`.
    pub const UNIT_NAME: u32 = 6;
    pub const PROCESS: u32 = 3;
    pub const THREAD: u32 = 4;
    pub const COUNTER: u32 = 8;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_NAME: u32 = 6;
    pub const THREAD_PID: u32 = 1;
    pub const THREAD_TID: u32 = 2;
    pub const THREAD_NAME: u32 = 5;
}

/// `TrackEvent`.
pub mod event {
    pub const TYPE: u32 = 9;
    pub const TRACK_UUID: u32 = 11;
    pub const NAME: u32 = 23;
    pub const COUNTER_VALUE: u32 = 30;
    pub const DOUBLE_COUNTER_VALUE: u32 = 44;
    pub const EXTRA_COUNTER_TRACK_UUIDS: u32 = 31;
    pub const EXTRA_COUNTER_VALUES: u32 = 12;
    /// `TrackEvent.Type`.
    pub const SLICE_BEGIN: u64 = 1;
    pub const SLICE_END: u64 = 2;
    pub const INSTANT: u64 = 3;
    pub const COUNTER: u64 = 4;
}

/// A message's fields being appended to a buffer.
pub struct Msg<'a> {
    buf: &'a mut Vec<u8>,
}

/// The bytes a nested message's length takes: a redundant varint of up to 2^28 − 1.
const LENGTH_BYTES: usize = 4;

impl<'a> Msg<'a> {
    pub fn new(buf: &'a mut Vec<u8>) -> Msg<'a> {
        Msg { buf }
    }

    /// A varint field (uint32/64, bool, enum; int32/int64 as their two's complement).
    #[inline]
    pub fn uint(&mut self, field: u32, v: u64) -> &mut Self {
        varint(self.buf, ((field << 3) | VARINT) as u64);
        varint(self.buf, v);
        self
    }

    #[inline]
    pub fn int(&mut self, field: u32, v: i64) -> &mut Self {
        self.uint(field, v as u64)
    }

    /// A `double` field.
    pub fn double(&mut self, field: u32, v: f64) -> &mut Self {
        varint(self.buf, ((field << 3) | I64) as u64);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn str(&mut self, field: u32, s: &str) -> &mut Self {
        varint(self.buf, ((field << 3) | LEN) as u64);
        varint(self.buf, s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
        self
    }

    /// A nested message, whose fields `body` writes. Its length is one byte while they are
    /// written, which it stays when under 128 (most messages: an event, a counter's value);
    /// else the fields move on by three for a 4-byte redundant varint.
    #[inline]
    pub fn nested(&mut self, field: u32, body: impl FnOnce(&mut Msg)) -> &mut Self {
        varint(self.buf, ((field << 3) | LEN) as u64);
        let at = self.buf.len();
        self.buf.push(0);
        body(&mut Msg { buf: self.buf });
        let end = self.buf.len();
        let len = end - at - 1;
        if len >= 0x80 {
            self.buf.resize(end + LENGTH_BYTES - 1, 0);
            self.buf.copy_within(at + 1..end, at + LENGTH_BYTES);
        }
        put_length(&mut self.buf[at..], len);
        self
    }

    /// The tag and length of a nested message of `len` bytes that follow from elsewhere.
    pub fn nested_head(&mut self, field: u32, len: usize) -> &mut Self {
        varint(self.buf, ((field << 3) | LEN) as u64);
        let at = self.buf.len();
        self.buf.resize(at + length_size(len), 0);
        put_length(&mut self.buf[at..], len);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_with_its_fields_written_apart_is_the_nested_message() {
        // Under 128 bytes, at 128 and far over: one length byte, then four.
        for n in [0, 100, 125, 126, 127, 128, 5_000, 70_000] {
            let text = "x".repeat(n);
            let mut body = Vec::new();
            Msg::new(&mut body).str(3, &text);
            let mut whole = Vec::new();
            Msg::new(&mut whole).nested(9, |m| {
                m.str(3, &text);
            });
            let mut apart = Vec::new();
            Msg::new(&mut apart).nested_head(9, body.len());
            assert_eq!(apart.len(), head_size(9, body.len()), "{n}");
            apart.extend_from_slice(&body);
            assert_eq!(apart, whole, "{n}");
        }
        let mut v = Vec::new();
        Msg::new(&mut v).uint(1, 300);
        assert_eq!(v.len(), uint_size(1, 300));
    }

    #[test]
    fn fields_encode_as_protobuf_says() {
        // The protobuf encoding guide's examples: field 1 = 150 is 08 96 01; field 2 =
        // "testing" is 12 07 74 65 73 74 69 6e 67; a nested message's length is one byte
        // under 128, else a 4-byte varint (the length's 7-bit groups, low first, with the
        // continuation bit on the first three).
        let mut buf = vec![];
        Msg::new(&mut buf).uint(1, 150).str(2, "testing");
        assert_eq!(
            buf,
            [0x08, 0x96, 0x01, 0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g']
        );
        let mut buf = vec![];
        Msg::new(&mut buf).nested(3, |m| {
            m.uint(1, 150);
        });
        assert_eq!(buf, [0x1a, 0x03, 0x08, 0x96, 0x01]);
        let mut buf = vec![];
        Msg::new(&mut buf).nested(3, |m| {
            m.str(1, &"x".repeat(200));
        });
        // 3 + 200 = 203 = 0x4b + 1·128: 0xcb 0x81 0x80 0x00.
        assert_eq!(&buf[..8], &[0x1a, 0xcb, 0x81, 0x80, 0x00, 0x0a, 0xc8, 0x01]);
        let mut buf = vec![];
        Msg::new(&mut buf).int(1, -1);
        assert_eq!(
            buf,
            [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }
}
