//! The trace.dat file around the CPUs' pages, as `trace-cmd.dat.v6(5)` and
//! `trace-cmd.dat.v7(5)` lay it out. Both carry the same metadata (the ring buffer's
//! layout, every event's format, kallsyms, printk formats, saved cmdlines, options): v6 one
//! after the other with the CPUs' page offsets after `flyrecord`; v7 as sections (an id,
//! flags, a description from the strings section, a size) that options point to, the CPUs'
//! pages compressed in chunks and described by the `BUFFER` option.

use std::io::{self, Write};

use super::compress::{self, Chunks};
use super::ring_buffer::{PAGE_HEADER, PAGE_SIZE};
use super::spill::Spill;
use crate::tracepoint::{TraceEvent, EVENTS};

/// trace-cmd's option ids (`TRACECMD_OPTION_*`), which also name v7's sections.
const OPTION_DONE: u16 = 0;
const OPTION_BUFFER: u16 = 3;
const OPTION_TRACECLOCK: u16 = 4;
const OPTION_UNAME: u16 = 5;
const OPTION_CPUCOUNT: u16 = 8;
const SECTION_STRINGS: u16 = 15;
const SECTION_HEADER_INFO: u16 = 16;
const SECTION_FTRACE_EVENTS: u16 = 17;
const SECTION_EVENT_FORMATS: u16 = 18;
const SECTION_KALLSYMS: u16 = 19;
const SECTION_PRINTK: u16 = 20;
const SECTION_CMDLINES: u16 = 21;
/// `TRACECMD_SEC_FL_COMPRESS`.
const SECTION_COMPRESSED: u16 = 1;
/// A section's header: id, flags, description, size.
const SECTION_HEADER: usize = 16;

/// The trace clock (`trace_clock`'s content, the chosen one in brackets).
const TRACE_CLOCK: &[u8] = b"[local] global counter uptime perf mono mono_raw boot\n\0";

/// What both versions carry besides the pages, each part as its section holds it.
pub struct Meta {
    pub header_info: Vec<u8>,
    pub ftrace_events: Vec<u8>,
    pub event_formats: Vec<u8>,
    pub kallsyms: Vec<u8>,
    pub printk: Vec<u8>,
    pub cmdlines: Vec<u8>,
    /// UNAME's text.
    pub uname: String,
}

impl Meta {
    /// `kallsyms` and `cmdlines` are the files' texts.
    pub fn new(kallsyms: &str, cmdlines: &str, uname: String) -> Meta {
        let mut header_info = Vec::new();
        sized(
            &mut header_info,
            b"header_page\0",
            8,
            header_page().as_bytes(),
        );
        sized(
            &mut header_info,
            b"header_event\0",
            8,
            HEADER_EVENT.as_bytes(),
        );
        // Ftrace's own events, then the systems with theirs.
        let mut ftrace_events = 1u32.to_le_bytes().to_vec();
        sized(
            &mut ftrace_events,
            b"",
            8,
            TraceEvent::Print.format().file().as_bytes(),
        );
        let systems = ["sched", "task", "power", "lisa", "schedlab"];
        let mut event_formats = (systems.len() as u32).to_le_bytes().to_vec();
        for system in systems {
            event_formats.extend_from_slice(system.as_bytes());
            event_formats.push(0);
            let of = || EVENTS.iter().filter(move |f| f.system == system);
            event_formats.extend_from_slice(&(of().count() as u32).to_le_bytes());
            for f in of() {
                sized(&mut event_formats, b"", 8, f.file().as_bytes());
            }
        }
        let mut kallsyms_part = Vec::new();
        sized(&mut kallsyms_part, b"", 4, kallsyms.as_bytes());
        let mut cmdlines_part = Vec::new();
        sized(&mut cmdlines_part, b"", 8, cmdlines.as_bytes());
        Meta {
            header_info,
            ftrace_events,
            event_formats,
            kallsyms: kallsyms_part,
            printk: 0u32.to_le_bytes().to_vec(),
            cmdlines: cmdlines_part,
            uname,
        }
    }
}

/// The file's first bytes: magic, "tracing", the version, little endian, 8-byte longs, the
/// page size.
fn init(out: &mut Vec<u8>, version: u8) {
    out.extend_from_slice(b"\x17\x08\x44tracing");
    out.extend_from_slice(&[b'0' + version, 0, 0, 8]);
    out.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
}

/// Version 6: the metadata, the CPU count, the options, `flyrecord` and each CPU's (offset,
/// size); then the pages, page aligned.
pub fn write_v6(out: &mut impl Write, meta: &Meta, cpus: Vec<Spill>) -> io::Result<()> {
    let mut h = Vec::with_capacity(64 * 1024);
    init(&mut h, 6);
    for part in [
        &meta.header_info,
        &meta.ftrace_events,
        &meta.event_formats,
        &meta.kallsyms,
    ] {
        h.extend_from_slice(part);
    }
    h.extend_from_slice(&meta.printk);
    h.extend_from_slice(&meta.cmdlines);
    h.extend_from_slice(&(cpus.len() as u32).to_le_bytes());
    h.extend_from_slice(b"options  \0");
    for (id, data) in options(meta, cpus.len()) {
        option(&mut h, id, &data);
    }
    h.extend_from_slice(&OPTION_DONE.to_le_bytes());
    h.extend_from_slice(b"flyrecord\0");
    let table = h.len() + 16 * cpus.len();
    let mut at = table.next_multiple_of(PAGE_SIZE) as u64;
    for cpu in &cpus {
        let size = cpu.len();
        h.extend_from_slice(&at.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        at += size;
    }
    h.resize(table.next_multiple_of(PAGE_SIZE), 0);
    out.write_all(&h)?;
    for cpu in cpus {
        cpu.copy_to(out)?;
    }
    Ok(())
}

/// Version 7 with the pages compressed: the strings, the metadata sections, one options
/// section (pointing at them, with the `BUFFER` option describing the pages), then the
/// `BUFFER` flyrecord section with each CPU's chunks, page aligned.
pub fn write_v7(out: &mut impl Write, meta: &Meta, cpus: Vec<Chunks>) -> io::Result<()> {
    let mut h = Vec::with_capacity(64 * 1024);
    init(&mut h, 7);
    let (name, version) = compress::name();
    for s in [name, version] {
        h.extend_from_slice(s.as_bytes());
        h.push(0);
    }
    let options_at = h.len();
    h.extend_from_slice(&0u64.to_le_bytes()); // the options section's offset, set below
    let mut strings = Strings::default();
    let described = [
        (SECTION_HEADER_INFO, "headers", &meta.header_info),
        (SECTION_FTRACE_EVENTS, "ftrace events", &meta.ftrace_events),
        (SECTION_EVENT_FORMATS, "events format", &meta.event_formats),
        (SECTION_KALLSYMS, "kallsyms", &meta.kallsyms),
        (SECTION_PRINTK, "printk", &meta.printk),
        (SECTION_CMDLINES, "command lines", &meta.cmdlines),
    ];
    let descs: Vec<u32> = ["options", "buffer flyrecord ", "strings"]
        .into_iter()
        .chain(described.iter().map(|d| d.1))
        .map(|s| strings.add(s))
        .collect();
    section(&mut h, SECTION_STRINGS, 0, descs[2], &strings.data);
    let mut options = vec![];
    for (i, (id, _, data)) in described.iter().enumerate() {
        options.push((*id, (h.len() as u64).to_le_bytes().to_vec()));
        section(&mut h, *id, 0, descs[3 + i], data);
    }
    options.extend(self::options(meta, cpus.len()));
    // The pages' place: after the options section, whose size is known but for the BUFFER
    // option's, which depends only on the CPU count.
    let buffer_len = 8 + 1 + b"local\0".len() + 4 + 4 + 20 * cpus.len();
    let options_len: usize =
        options.iter().map(|o| 6 + o.1.len()).sum::<usize>() + 6 + buffer_len + 6 + 8;
    let flyrecord_at = (h.len() + SECTION_HEADER + options_len) as u64;
    let mut at = flyrecord_at + SECTION_HEADER as u64;
    let mut buffer = flyrecord_at.to_le_bytes().to_vec();
    buffer.extend_from_slice(b"\0local\0");
    buffer.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
    buffer.extend_from_slice(&(cpus.len() as u32).to_le_bytes());
    let mut places = Vec::with_capacity(cpus.len());
    for (id, cpu) in cpus.iter().enumerate() {
        at = at.next_multiple_of(PAGE_SIZE as u64);
        let size = cpu.size();
        buffer.extend_from_slice(&(id as u32).to_le_bytes());
        buffer.extend_from_slice(&at.to_le_bytes());
        buffer.extend_from_slice(&size.to_le_bytes());
        places.push(at);
        at += size;
    }
    debug_assert_eq!(buffer.len(), buffer_len);
    options.push((OPTION_BUFFER, buffer));
    let options_at_now = h.len() as u64;
    h[options_at..options_at + 8].copy_from_slice(&options_at_now.to_le_bytes());
    let mut opts = Vec::with_capacity(options_len);
    for (id, data) in &options {
        option(&mut opts, *id, data);
    }
    option(&mut opts, OPTION_DONE, &0u64.to_le_bytes()); // no further options section
    debug_assert_eq!(opts.len(), options_len);
    section(&mut h, OPTION_DONE, 0, descs[0], &opts);
    // The flyrecord section: its size runs to the end of the last CPU's chunks.
    let end = at;
    h.extend_from_slice(&OPTION_BUFFER.to_le_bytes());
    h.extend_from_slice(&SECTION_COMPRESSED.to_le_bytes());
    h.extend_from_slice(&descs[1].to_le_bytes());
    h.extend_from_slice(&(end - flyrecord_at - SECTION_HEADER as u64).to_le_bytes());
    out.write_all(&h)?;
    let mut written = h.len() as u64;
    for (cpu, place) in cpus.into_iter().zip(places) {
        out.write_all(&vec![0; (place - written) as usize])?;
        written = place + cpu.size();
        cpu.copy_to(out)?;
    }
    Ok(())
}

/// The options both versions carry: the trace clock, uname, the CPU count.
fn options(meta: &Meta, nr_cpus: usize) -> Vec<(u16, Vec<u8>)> {
    let mut uname = meta.uname.clone().into_bytes();
    uname.push(0);
    vec![
        (OPTION_TRACECLOCK, TRACE_CLOCK.to_vec()),
        (OPTION_UNAME, uname),
        (OPTION_CPUCOUNT, (nr_cpus as u32).to_le_bytes().to_vec()),
    ]
}

/// v7's strings section: NUL-terminated strings, each named by its offset.
#[derive(Default)]
struct Strings {
    data: Vec<u8>,
}

impl Strings {
    fn add(&mut self, s: &str) -> u32 {
        let at = self.data.len() as u32;
        self.data.extend_from_slice(s.as_bytes());
        self.data.push(0);
        at
    }
}

/// A v7 section: id, flags, description, size, data.
fn section(h: &mut Vec<u8>, id: u16, flags: u16, desc: u32, data: &[u8]) {
    h.extend_from_slice(&id.to_le_bytes());
    h.extend_from_slice(&flags.to_le_bytes());
    h.extend_from_slice(&desc.to_le_bytes());
    h.extend_from_slice(&(data.len() as u64).to_le_bytes());
    h.extend_from_slice(data);
}

/// `header_page`: `ring_buffer_print_page_header` for 4 KiB pages on a 64-bit kernel.
fn header_page() -> String {
    format!(
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
         \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
         \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
         \tfield: char data;\toffset:{PAGE_HEADER};\tsize:{};\tsigned:0;\n",
        PAGE_SIZE - PAGE_HEADER
    )
}

/// `header_event`: `ring_buffer_print_entry_header`.
const HEADER_EVENT: &str = "# compressed entry header\n\
    \ttype_len    :    5 bits\n\
    \ttime_delta  :   27 bits\n\
    \tarray       :   32 bits\n\
    \n\
    \tpadding     : type == 29\n\
    \ttime_extend : type == 30\n\
    \ttime_stamp : type == 31\n\
    \tdata max type_len  == 28\n";

/// A tag, the size of `data` in `width` bytes, and `data`.
fn sized(h: &mut Vec<u8>, tag: &[u8], width: usize, data: &[u8]) {
    h.extend_from_slice(tag);
    h.extend_from_slice(&(data.len() as u64).to_le_bytes()[..width]);
    h.extend_from_slice(data);
}

/// An option: id, size, data.
fn option(h: &mut Vec<u8>, id: u16, data: &[u8]) {
    h.extend_from_slice(&id.to_le_bytes());
    h.extend_from_slice(&(data.len() as u32).to_le_bytes());
    h.extend_from_slice(data);
}
