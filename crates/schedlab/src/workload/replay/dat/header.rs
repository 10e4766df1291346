//! trace.dat's metadata, as `trace-cmd.dat.v6(5)` and `trace-cmd.dat.v7(5)` lay it out:
//! the page layout (`header_page`), every event's format, the saved comms, the options
//! (uname, the CPU count, a time offset) and where each CPU's pages are: v6 one part after
//! the other, then `flyrecord` and the CPUs' places; v7 as sections (possibly compressed)
//! that options point to, the pages described by the `BUFFER` option.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

use super::format::EventFormat;
use super::pages::{PageLayout, Source};
use crate::error::InputError;

/// trace-cmd's option ids (`TRACECMD_OPTION_*`), which also name v7's sections.
const OPTION_DONE: u16 = 0;
const OPTION_BUFFER: u16 = 3;
const OPTION_TRACECLOCK: u16 = 4;
const OPTION_UNAME: u16 = 5;
const OPTION_OFFSET: u16 = 7;
const OPTION_CPUCOUNT: u16 = 8;
const SECTION_HEADER_INFO: u16 = 16;
const SECTION_FTRACE_EVENTS: u16 = 17;
const SECTION_EVENT_FORMATS: u16 = 18;
const SECTION_CMDLINES: u16 = 21;
/// `TRACECMD_SEC_FL_COMPRESS`.
const SECTION_COMPRESSED: u16 = 1;
/// The largest metadata part read into memory (a kallsyms is a few MiB).
const MAX_PART: u64 = 256 << 20;

/// What the trace says besides its events.
#[derive(Debug)]
pub struct Meta {
    pub version: u8,
    pub layout: PageLayout,
    /// Every event's format, by id.
    pub events: HashMap<u16, EventFormat>,
    /// `saved_cmdlines`: pid and comm.
    pub cmdlines: Vec<(i32, String)>,
    pub uname: Option<String>,
    pub clock: Option<String>,
    /// The machine's CPUs (`CPUCOUNT`, and at least the CPUs with data).
    pub nr_cpus: usize,
    /// `OFFSET`: added to every time.
    pub offset: i64,
    /// Each CPU with data, and where its pages are.
    pub cpus: Vec<(u32, Source)>,
}

/// The file read from a place, each failure naming the offset.
struct Input<'a> {
    r: BufReader<&'a File>,
    at: u64,
    len: u64,
    path: &'a str,
}

impl<'a> Input<'a> {
    fn bad(&self, what: impl Into<String>) -> InputError {
        InputError::new(format!("{}: offset {}", self.path, self.at), what)
    }

    fn seek(&mut self, at: u64) -> Result<(), InputError> {
        if at > self.len {
            return Err(self.bad(format!("a place past the file's end ({at})")));
        }
        self.r
            .seek(SeekFrom::Start(at))
            .map_err(|e| self.bad(e.to_string()))?;
        self.at = at;
        Ok(())
    }

    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, InputError> {
        if n > self.len - self.at.min(self.len) || n > MAX_PART {
            return Err(self.bad(format!("{n} bytes said to follow, past the file's end")));
        }
        let mut b = vec![0; n as usize];
        self.r
            .read_exact(&mut b)
            .map_err(|e| self.bad(e.to_string()))?;
        self.at += n;
        Ok(b)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], InputError> {
        Ok(self.bytes(N as u64)?.try_into().unwrap())
    }

    fn u16(&mut self) -> Result<u16, InputError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, InputError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, InputError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn cstr(&mut self) -> Result<String, InputError> {
        let mut s = Vec::new();
        loop {
            match self.array::<1>()? {
                [0] => break,
                [b] if s.len() < 4096 => s.push(b),
                _ => return Err(self.bad("a string without its end")),
            }
        }
        Ok(String::from_utf8_lossy(&s).into_owned())
    }

    /// `tag` as it must read there.
    fn expect(&mut self, tag: &[u8], what: &str) -> Result<(), InputError> {
        let at = self.at;
        if self.bytes(tag.len() as u64)? != tag {
            self.at = at;
            return Err(self.bad(format!("{what} expected")));
        }
        Ok(())
    }
}

/// A metadata part in memory, read from its start.
struct Part<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Part<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let b = self.data.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(b)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn cstr(&mut self) -> Option<&'a str> {
        let n = self.data.get(self.at..)?.iter().position(|&b| b == 0)?;
        let s = std::str::from_utf8(self.take(n)?).ok()?;
        self.take(1)?;
        Some(s)
    }

    /// A text `u64`-sized.
    fn sized_text(&mut self) -> Option<&'a str> {
        let n = self.u64()?;
        std::str::from_utf8(self.take(usize::try_from(n).ok()?)?).ok()
    }
}

impl Meta {
    /// Read the metadata of `file` (named `path` in errors).
    pub fn read(file: &File, path: &str) -> Result<Meta, InputError> {
        let len = file
            .metadata()
            .map_err(|e| InputError::new(path, e.to_string()))?
            .len();
        let mut i = Input {
            r: BufReader::new(file),
            at: 0,
            len,
            path,
        };
        if i.bytes(10).ok().as_deref() != Some(b"\x17\x08\x44tracing") {
            return Err(InputError::new(
                path,
                "not a trace.dat file (no trace-cmd magic)",
            ));
        }
        let version = i.cstr()?;
        let version = match version.as_str() {
            "6" => 6,
            "7" => 7,
            v => {
                return Err(i.bad(format!(
                    "trace.dat version {v:?}, where schedlab reads 6 and 7"
                )))
            }
        };
        let [endian, _long, ..] = i.array::<2>()?;
        if endian != 0 {
            return Err(i.bad("a big-endian trace, which schedlab does not read"));
        }
        let page_size = i.u32()? as usize;
        if !(4096..=(1 << 20)).contains(&page_size) || !page_size.is_power_of_two() {
            return Err(i.bad(format!("a page size of {page_size} bytes")));
        }
        let mut meta = Meta {
            version,
            layout: PageLayout {
                size: page_size,
                commit: 8,
                long: 8,
                data: 16,
            },
            events: HashMap::new(),
            cmdlines: Vec::new(),
            uname: None,
            clock: None,
            nr_cpus: 0,
            offset: 0,
            cpus: Vec::new(),
        };
        if version == 6 {
            meta.read_v6(&mut i)?;
        } else {
            meta.read_v7(&mut i)?;
        }
        // The CPU count, and at least every CPU with data (a CPUCOUNT too small is damage).
        let with_data = meta
            .cpus
            .iter()
            .map(|c| c.0 as usize + 1)
            .max()
            .unwrap_or(0);
        meta.nr_cpus = meta.nr_cpus.max(with_data);
        Ok(meta)
    }

    /// v6: each part in turn, the CPU count, the options, `flyrecord` and the CPUs' places.
    fn read_v6(&mut self, i: &mut Input) -> Result<(), InputError> {
        i.expect(b"header_page\0", "\"header_page\"")?;
        let n = i.u64()?;
        let page = i.bytes(n)?;
        self.header_page(i, &page)?;
        i.expect(b"header_event\0", "\"header_event\"")?;
        let n = i.u64()?;
        i.bytes(n)?;
        let n = i.u32()?;
        for _ in 0..n {
            let size = i.u64()?;
            let text = i.bytes(size)?;
            self.event(i, "ftrace", &text)?;
        }
        let systems = i.u32()?;
        for _ in 0..systems {
            let system = i.cstr()?;
            for _ in 0..i.u32()? {
                let size = i.u64()?;
                let text = i.bytes(size)?;
                self.event(i, &system, &text)?;
            }
        }
        let n = i.u32()? as u64; // kallsyms
        i.bytes(n)?;
        let n = i.u32()? as u64; // printk formats
        i.bytes(n)?;
        let n = i.u64()?;
        self.cmdlines = cmdlines(&i.bytes(n)?);
        let cpus = i.u32()?;
        let mut tag = i.bytes(10)?;
        if tag == b"options  \0" {
            while let Some((id, data)) = option(i)? {
                self.option(i, id, &data)?;
            }
            tag = i.bytes(10)?;
        }
        match &tag[..] {
            b"flyrecord\0" => {}
            b"latency  \0" => return Err(i.bad("a latency trace (text), not a record of events")),
            _ => return Err(i.bad("\"flyrecord\" expected")),
        }
        for cpu in 0..cpus {
            let (at, size) = (i.u64()?, i.u64()?);
            let end = at.checked_add(size).filter(|&e| e <= i.len);
            let end =
                end.ok_or_else(|| i.bad(format!("CPU {cpu}'s pages run past the file's end")))?;
            self.cpus.push((cpu, Source::Raw { at, end }));
        }
        Ok(())
    }

    /// v7: the compression, then the options sections, each pointing at the next; the
    /// metadata sections they point to; the pages the top instance's `BUFFER` describes.
    fn read_v7(&mut self, i: &mut Input) -> Result<(), InputError> {
        let algorithm = i.cstr()?;
        i.cstr()?; // its version
        let mut zstd = match algorithm.as_str() {
            "zstd" => Some(zstd::bulk::Decompressor::new().map_err(|e| i.bad(e.to_string()))?),
            "none" | "" => None,
            a => {
                return Err(i.bad(format!(
                    "compressed with {a}, which schedlab does not read: `trace-cmd convert \
                     --compression zstd -i IN -o OUT` writes it with zstd"
                )))
            }
        };
        let mut next = i.u64()?;
        let mut sections = Vec::new();
        let mut buffers = Vec::new();
        let mut seen = 0;
        while next != 0 {
            seen += 1;
            if seen > 1000 {
                return Err(i.bad("options sections in a loop"));
            }
            i.seek(next)?;
            let data = section(i, &mut zstd, OPTION_DONE)?;
            let mut p = Part { data: &data, at: 0 };
            loop {
                let bad = || i.bad("an options section ends within an option");
                let id = u16::from_le_bytes(p.take(2).ok_or_else(bad)?.try_into().unwrap());
                let size = p.u32().ok_or_else(bad)? as usize;
                let body = p.take(size).ok_or_else(bad)?;
                match id {
                    OPTION_DONE => {
                        next = Part { data: body, at: 0 }.u64().unwrap_or(0);
                        break;
                    }
                    SECTION_HEADER_INFO..=SECTION_CMDLINES => {
                        let at = Part { data: body, at: 0 }.u64().ok_or_else(bad)?;
                        sections.push((id, at));
                    }
                    OPTION_BUFFER => buffers.push(body.to_vec()),
                    _ => self.option(i, id, body)?,
                }
            }
        }
        for (id, at) in sections {
            i.seek(at)?;
            let data = section(i, &mut zstd, id)?;
            self.v7_part(i, id, &data)?;
        }
        let top = buffers.iter().find(|b| b.get(8) == Some(&0));
        let top = top.ok_or_else(|| i.bad("no BUFFER option for the trace's top instance"))?;
        self.buffer(i, top, zstd.is_some())
    }

    /// A v7 metadata section's part, read as v6 reads it.
    fn v7_part(&mut self, i: &Input, id: u16, data: &[u8]) -> Result<(), InputError> {
        let mut p = Part { data, at: 0 };
        let bad = |what: &str| i.bad(format!("section {id}: {what}"));
        match id {
            SECTION_HEADER_INFO => {
                p.take(12)
                    .filter(|t| t == b"header_page\0")
                    .ok_or_else(|| bad("no header_page"))?;
                let page = p.sized_text().ok_or_else(|| bad("a short header_page"))?;
                self.header_page(i, page.as_bytes())?;
            }
            SECTION_FTRACE_EVENTS => {
                for _ in 0..p.u32().ok_or_else(|| bad("no count"))? {
                    let text = p.sized_text().ok_or_else(|| bad("a short format"))?;
                    self.event(i, "ftrace", text.as_bytes())?;
                }
            }
            SECTION_EVENT_FORMATS => {
                for _ in 0..p.u32().ok_or_else(|| bad("no count"))? {
                    let system = p.cstr().ok_or_else(|| bad("a system without a name"))?;
                    for _ in 0..p.u32().ok_or_else(|| bad("no count"))? {
                        let text = p.sized_text().ok_or_else(|| bad("a short format"))?;
                        self.event(i, system, text.as_bytes())?;
                    }
                }
            }
            SECTION_CMDLINES => {
                let text = p
                    .sized_text()
                    .ok_or_else(|| bad("a short command lines part"))?;
                self.cmdlines = cmdlines(text.as_bytes());
            }
            _ => {} // kallsyms, printk formats: not needed
        }
        Ok(())
    }

    /// The top instance's `BUFFER` option: its flyrecord section's place, its CPUs' pages.
    fn buffer(&mut self, i: &mut Input, body: &[u8], compressed: bool) -> Result<(), InputError> {
        let (section_at, clock, places) =
            buffer_option(body).ok_or_else(|| i.bad("a short BUFFER option"))?;
        self.clock.get_or_insert(clock);
        i.seek(section_at)?;
        let (_, flags, _, size) = (i.u16()?, i.u16()?, i.u32()?, i.u64()?);
        let end = i.at.checked_add(size).filter(|&e| e <= i.len);
        let end = end.ok_or_else(|| i.bad("the flyrecord section runs past the file's end"))?;
        let chunks = flags & SECTION_COMPRESSED != 0;
        if chunks && !compressed {
            return Err(i.bad("compressed pages in a file that names no compression"));
        }
        for (cpu, at, size) in places {
            if at < section_at || at.checked_add(size).is_none_or(|e| e > end) {
                return Err(i.bad(format!("CPU {cpu}'s pages lie outside their section")));
            }
            let source = if chunks && size > 0 {
                i.seek(at)?;
                let left = i.u32()?;
                Source::Chunks {
                    at: at + 4,
                    end: at + size,
                    left,
                }
            } else {
                Source::Raw { at, end: at + size }
            };
            self.cpus.push((cpu, source));
        }
        Ok(())
    }

    /// `header_page`: the commit word's place and size, where the events start.
    fn header_page(&mut self, i: &Input, text: &[u8]) -> Result<(), InputError> {
        let text = String::from_utf8_lossy(text);
        let fmt = format!("name: header_page\nID: 0\nformat:\n{text}");
        let f = EventFormat::parse("", &fmt);
        let (commit, data) = f
            .as_ref()
            .and_then(|f| Some((f.field("commit")?, f.field("data")?)))
            .ok_or_else(|| i.bad("a header_page without its commit and data fields"))?;
        if !matches!(commit.size, 4 | 8) || data.offset >= self.layout.size {
            return Err(i.bad("a header_page of an unknown layout"));
        }
        self.layout.commit = commit.offset;
        self.layout.long = commit.size;
        self.layout.data = data.offset;
        Ok(())
    }

    /// An event's format file.
    fn event(&mut self, i: &Input, system: &str, text: &[u8]) -> Result<(), InputError> {
        let text = String::from_utf8_lossy(text);
        let f = EventFormat::parse(system, &text).ok_or_else(|| {
            i.bad(format!(
                "an event format of {system} without its name or ID"
            ))
        })?;
        self.events.insert(f.id, f);
        Ok(())
    }

    /// An option both versions may carry.
    fn option(&mut self, i: &Input, id: u16, data: &[u8]) -> Result<(), InputError> {
        let text = || {
            String::from_utf8_lossy(data.split(|&b| b == 0).next().unwrap_or_default()).into_owned()
        };
        match id {
            OPTION_UNAME => self.uname = Some(text()),
            OPTION_TRACECLOCK => self.clock = Some(text()),
            OPTION_CPUCOUNT => {
                let n = Part { data, at: 0 }
                    .u32()
                    .ok_or_else(|| i.bad("a short CPUCOUNT option"))?;
                self.nr_cpus = n as usize;
            }
            OPTION_OFFSET => {
                self.offset = text()
                    .trim()
                    .parse()
                    .map_err(|_| i.bad("an OFFSET option that is not a number"))?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// An option (None: the end of the options).
fn option(i: &mut Input) -> Result<Option<(u16, Vec<u8>)>, InputError> {
    let id = i.u16()?;
    if id == OPTION_DONE {
        return Ok(None);
    }
    let size = i.u32()? as u64;
    Ok(Some((id, i.bytes(size)?)))
}

/// A v7 section's data, of section `id`, decompressed if need be.
fn section(
    i: &mut Input,
    zstd: &mut Option<zstd::bulk::Decompressor<'static>>,
    id: u16,
) -> Result<Vec<u8>, InputError> {
    let (found, flags, _, size) = (i.u16()?, i.u16()?, i.u32()?, i.u64()?);
    if found != id {
        return Err(i.bad(format!("section {id} expected, section {found} found")));
    }
    let data = i.bytes(size)?;
    if flags & SECTION_COMPRESSED == 0 {
        return Ok(data);
    }
    let z = zstd
        .as_mut()
        .ok_or_else(|| i.bad("a compressed section in a file that names no compression"))?;
    let mut p = Part { data: &data, at: 0 };
    let sizes = p.u32().zip(p.u32());
    let (zsize, plain) = sizes.ok_or_else(|| i.bad("a compressed section without its sizes"))?;
    let body = p
        .take(zsize as usize)
        .ok_or_else(|| i.bad("a compressed section shorter than it says"))?;
    if plain as u64 > MAX_PART {
        return Err(i.bad(format!("a section of {plain} bytes")));
    }
    z.decompress(body, plain as usize)
        .map_err(|e| i.bad(format!("a section does not decompress: {e}")))
}

/// A CPU's id, and its pages' place and size.
type CpuPlace = (u32, u64, u64);

/// A `BUFFER` option's flyrecord section place, trace clock, and each CPU's place (its
/// instance's name and page size passed over).
fn buffer_option(body: &[u8]) -> Option<(u64, String, Vec<CpuPlace>)> {
    let mut p = Part { data: body, at: 0 };
    let section_at = p.u64()?;
    p.cstr()?;
    let clock = p.cstr()?.to_string();
    p.u32()?;
    let count = p.u32()?;
    let places = (0..count)
        .map(|_| Some((p.u32()?, p.u64()?, p.u64()?)))
        .collect::<Option<_>>()?;
    Some((section_at, clock, places))
}

/// `saved_cmdlines`: "pid comm" lines.
fn cmdlines(text: &[u8]) -> Vec<(i32, String)> {
    let text = String::from_utf8_lossy(text);
    text.lines()
        .filter_map(|l| {
            let (pid, comm) = l.split_once(' ')?;
            Some((pid.parse().ok()?, comm.to_string()))
        })
        .collect()
}
