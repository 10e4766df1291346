//! One CPU's pages in trace.dat, read one page (v6) or one compressed chunk of pages (v7)
//! at a time: each page a `buffer_data_page` (its first event's time, the bytes committed,
//! the events), each event a 4-byte header `type_len:5, time_delta:27` and its record
//! (`kernel/trace/ring_buffer.c`), read as libtraceevent's kbuffer reads them.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;

use crate::error::InputError;

/// `RINGBUF_TYPE_PADDING`, `RINGBUF_TYPE_TIME_EXTEND`, `RINGBUF_TYPE_TIME_STAMP`.
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// `TS_SHIFT`: the width of a header's time delta.
const TS_SHIFT: u32 = 27;
/// The commit word's size bits (`COMMIT_MASK`); above them, the page's flags.
const COMMIT_MASK: u64 = (1 << 27) - 1;
/// `RB_MISSED_EVENTS`: events were lost before this page.
const MISSED_EVENTS: u64 = 1 << 31;
/// An absolute time stamp carries 59 bits; the top 5 come from the page's time.
const TS_MSB: u64 = 0xf8 << 56;
/// The largest chunk of pages a v7 file may give to decompress.
const MAX_CHUNK: usize = 64 << 20;

/// A page's layout (`header_page`): its size, the commit word's place and size (the
/// kernel's long), and where the events start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    pub size: usize,
    pub commit: usize,
    pub long: usize,
    pub data: usize,
}

/// Where a CPU's pages are in the file.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// Pages as they are, from `at` to `end`.
    Raw { at: u64, end: u64 },
    /// `left` zstd chunks, the next at `at`, the section ending at `end`.
    Chunks { at: u64, end: u64, left: u32 },
}

/// What reading a CPU's pages needs from the file.
pub struct Ctx<'a> {
    pub file: &'a File,
    pub path: &'a str,
    pub layout: PageLayout,
    pub zstd: &'a mut zstd::bulk::Decompressor<'static>,
}

impl Ctx<'_> {
    fn bad(&self, at: u64, what: &str) -> InputError {
        InputError::new(format!("{}: offset {at}", self.path), what)
    }

    fn read(&self, at: u64, buf: &mut [u8]) -> Result<(), InputError> {
        self.file
            .read_exact_at(buf, at)
            .map_err(|_| self.bad(at, &format!("the file ends within {} bytes", buf.len())))
    }
}

/// A CPU's pages, read in order, with its next record.
pub struct CpuPages {
    pub cpu: u32,
    source: Source,
    /// The pages read and not yet gone through.
    buf: Vec<u8>,
    /// Where in the file `buf` starts (a chunk's pages: the chunk's place).
    buf_at: u64,
    /// The page being read starts at `page`; its events end at `end`; the next event's
    /// header is at `next`.
    page: usize,
    end: usize,
    next: usize,
    /// The last event's time.
    pub ts: u64,
    /// The record `advance` found: its bytes in `buf`.
    record: Range<usize>,
    /// Pages that say events were lost before them.
    pub lost: u64,
}

impl CpuPages {
    pub fn new(cpu: u32, source: Source) -> CpuPages {
        CpuPages {
            cpu,
            source,
            buf: Vec::new(),
            buf_at: 0,
            page: 0,
            end: 0,
            next: 0,
            ts: 0,
            record: 0..0,
            lost: 0,
        }
    }

    /// The record `advance` found.
    pub fn record(&self) -> &[u8] {
        &self.buf[self.record.clone()]
    }

    /// On to the next record (false: none left), reading pages as needed.
    pub fn advance(&mut self, ctx: &mut Ctx) -> Result<bool, InputError> {
        loop {
            if self.next + 4 > self.end {
                if !self.next_page(ctx)? {
                    return Ok(false);
                }
                continue;
            }
            if self.event(ctx)? {
                return Ok(true);
            }
        }
    }

    fn word(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.buf[at..at + 4].try_into().unwrap())
    }

    /// The event at `next`: a record (true), or a time or padding event passed over.
    fn event(&mut self, ctx: &Ctx) -> Result<bool, InputError> {
        let at = self.next;
        let h = self.word(at);
        let (type_len, delta) = (h & 31, (h >> 5) as u64);
        let array = |s: &Self| (at + 8 <= s.end).then(|| s.word(at + 4) as usize);
        let past_end = || {
            ctx.bad(
                self.buf_at + at as u64,
                "an event runs past its page's commit",
            )
        };
        match type_len {
            TYPE_PADDING if delta == 0 => self.next = self.end, // the rest of the page
            TYPE_PADDING => {
                // A discarded event: its time counts.
                let len = array(self).ok_or_else(past_end)?;
                self.ts += delta;
                self.next = at + 4 + len;
            }
            TYPE_TIME_EXTEND => {
                let high = array(self).ok_or_else(past_end)? as u64;
                self.ts += (high << TS_SHIFT) + delta;
                self.next = at + 8;
            }
            TYPE_TIME_STAMP => {
                let high = array(self).ok_or_else(past_end)? as u64;
                self.ts = ((high << TS_SHIFT) | delta) | (self.ts & TS_MSB);
                self.next = at + 8;
            }
            0 => {
                let len = array(self).ok_or_else(past_end)?.saturating_sub(4);
                self.ts += delta;
                self.record = at + 8..at + 8 + len.next_multiple_of(4);
                self.next = self.record.end;
            }
            n => {
                self.ts += delta;
                self.record = at + 4..at + 4 + 4 * n as usize;
                self.next = self.record.end;
            }
        }
        if self.next > self.end {
            return Err(past_end());
        }
        Ok(type_len <= 28)
    }

    /// The next page (false: none left): its time, its commit.
    fn next_page(&mut self, ctx: &mut Ctx) -> Result<bool, InputError> {
        let size = ctx.layout.size;
        let start = if self.buf.is_empty() {
            0
        } else {
            self.page + size
        };
        if start + size > self.buf.len() {
            if !self.load(ctx)? {
                return Ok(false);
            }
        } else {
            self.page = start;
        }
        let p = self.page;
        let place = self.buf_at + p as u64;
        let mut commit_word = [0u8; 8];
        let c = p + ctx.layout.commit;
        commit_word[..ctx.layout.long].copy_from_slice(&self.buf[c..c + ctx.layout.long]);
        let commit = u64::from_le_bytes(commit_word);
        let used = (commit & COMMIT_MASK) as usize;
        if ctx.layout.data + used > size {
            return Err(ctx.bad(
                place,
                &format!("a page commits {used} bytes, more than it holds"),
            ));
        }
        self.lost += (commit & MISSED_EVENTS != 0) as u64;
        let ts = u64::from_le_bytes(self.buf[p..p + 8].try_into().unwrap());
        if ts < self.ts {
            let msg = format!(
                "CPU {}'s page starts at {ts} ns, before its last event ({} ns)",
                self.cpu, self.ts
            );
            return Err(ctx.bad(place, &msg));
        }
        self.ts = ts;
        self.next = p + ctx.layout.data;
        self.end = self.next + used;
        self.record = self.next..self.next;
        Ok(true)
    }

    /// The next page, or chunk of pages, from the file into `buf` (false: none left).
    fn load(&mut self, ctx: &mut Ctx) -> Result<bool, InputError> {
        let size = ctx.layout.size as u64;
        match &mut self.source {
            Source::Raw { at, end } => {
                if *at >= *end {
                    return Ok(false);
                }
                if *end - *at < size {
                    return Err(ctx.bad(*at, &format!("a short page ({} bytes)", *end - *at)));
                }
                self.buf.resize(size as usize, 0);
                self.buf_at = *at;
                ctx.read(*at, &mut self.buf)?;
                *at += size;
            }
            Source::Chunks { at, end, left } => {
                if *left == 0 {
                    return Ok(false);
                }
                let mut head = [0u8; 8];
                ctx.read(*at, &mut head)?;
                let zsize = u32::from_le_bytes(head[..4].try_into().unwrap()) as u64;
                let pages = u32::from_le_bytes(head[4..].try_into().unwrap()) as usize;
                if *at + 8 + zsize > *end
                    || pages > MAX_CHUNK
                    || !(pages as u64).is_multiple_of(size)
                {
                    return Err(ctx.bad(*at, "a compressed chunk's sizes do not fit its section"));
                }
                let mut z = vec![0; zsize as usize];
                ctx.read(*at + 8, &mut z)?;
                self.buf.clear();
                self.buf.reserve(pages);
                let n = ctx
                    .zstd
                    .decompress_to_buffer(&z, &mut self.buf)
                    .map_err(|e| ctx.bad(*at, &format!("a chunk does not decompress: {e}")))?;
                if n != pages {
                    return Err(ctx.bad(*at, "a chunk decompresses to another size than it says"));
                }
                self.buf_at = *at;
                *at += 8 + zsize;
                *left -= 1;
                if pages == 0 {
                    return self.load(ctx);
                }
            }
        }
        self.page = 0;
        Ok(true)
    }
}
