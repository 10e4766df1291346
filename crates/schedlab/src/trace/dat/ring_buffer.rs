//! One CPU's ring buffer as the kernel lays out its pages (`kernel/trace/ring_buffer.c`),
//! which trace.dat stores as they are: a page is `struct buffer_data_page` (the time of its
//! first event, the bytes committed, the data), and each event a 4-byte header of
//! `type_len:5, time_delta:27` (the time since the previous event) and its record. Pages
//! are filled where they will be stored: `PAGES_IN_CHUNK` of them go to the store at a time,
//! as they are (v6) or as a chunk for the compressor (v7).

use std::io;

use super::spill::Spill;

/// The page size (4 KiB, as on x86_64 and most arm64 kernels).
pub const PAGE_SIZE: usize = 4096;
/// `buffer_data_page`'s header: `u64 time_stamp`, `local_t commit` (8 bytes on 64-bit).
pub const PAGE_HEADER: usize = 16;
/// `TS_SHIFT`: a delta's width; longer gaps take a time extend.
const TS_SHIFT: u32 = 27;
/// `RINGBUF_TYPE_TIME_EXTEND`.
const TYPE_TIME_EXTEND: u32 = 30;
/// `RB_MAX_SMALL_DATA`: records up to 28 words give their length in `type_len`; longer ones
/// in the word after the header.
const MAX_SMALL_DATA: usize = 4 * 28;
/// The largest record a page holds (with a time extend and a length word).
pub const MAX_RECORD: usize = PAGE_SIZE - PAGE_HEADER - 16;
/// Pages per compressed chunk (trace-cmd's `PAGES_IN_CHUNK`).
pub const PAGES_IN_CHUNK: usize = 10;
/// The bytes of a chunk's pages.
pub const CHUNK: usize = PAGES_IN_CHUNK * PAGE_SIZE;

/// Where the CPUs' full pages go.
pub trait PageStore {
    /// Take `cpu`'s pages (whole pages, at most a chunk), leaving `pages` empty.
    fn store(&mut self, cpu: usize, pages: &mut Vec<u8>) -> io::Result<()>;
}

/// Pages as they are (trace.dat v6), by CPU.
impl PageStore for Vec<Spill> {
    fn store(&mut self, cpu: usize, pages: &mut Vec<u8>) -> io::Result<()> {
        self[cpu].push(pages)?;
        pages.clear();
        Ok(())
    }
}

/// A CPU's buffer: its closed pages not yet stored, then the page being filled.
pub struct CpuBuffer {
    cpu: usize,
    /// Whole pages; the last is being filled when `used > 0`.
    pages: Vec<u8>,
    /// Bytes of events in the last page after its header (0: no page open).
    used: usize,
    /// The time of the last event written.
    last: u64,
}

impl CpuBuffer {
    pub fn new(cpu: usize) -> CpuBuffer {
        CpuBuffer {
            cpu,
            pages: Vec::with_capacity(CHUNK),
            used: 0,
            last: 0,
        }
    }

    /// Append a record of `len` bytes (at most `MAX_RECORD`) at time `ts` (never before the
    /// last), which `fill` writes into its zeroed place: `rb_update_event`'s header, after a
    /// time extend when the delta overflows 27 bits (`rb_add_time_stamp`); a page that
    /// cannot hold it is closed and the next starts at `ts` with a delta of 0.
    pub fn write(
        &mut self,
        ts: u64,
        len: usize,
        store: &mut impl PageStore,
        fill: impl FnOnce(&mut [u8]),
    ) -> io::Result<()> {
        debug_assert!(len <= MAX_RECORD && ts >= self.last);
        let padded = len.next_multiple_of(4);
        let need = if padded <= MAX_SMALL_DATA { 4 } else { 8 } + padded;
        let mut delta = ts - self.last;
        let extend = if delta >> TS_SHIFT != 0 { 8 } else { 0 };
        if self.used == 0 || PAGE_HEADER + self.used + extend + need > PAGE_SIZE {
            self.close_page(store)?;
            self.open_page(ts);
            delta = 0;
        } else if extend > 0 {
            self.word(TYPE_TIME_EXTEND | ((delta as u32) << 5));
            self.word((delta >> TS_SHIFT) as u32);
            delta = 0;
        }
        if padded <= MAX_SMALL_DATA {
            self.word((padded / 4) as u32 | ((delta as u32) << 5));
        } else {
            self.word((delta as u32) << 5);
            self.word(padded as u32 + 4);
        }
        let at = self.page_at() + PAGE_HEADER + self.used;
        fill(&mut self.pages[at..at + len]);
        self.used += padded;
        self.last = ts;
        Ok(())
    }

    /// Where the last page starts.
    fn page_at(&self) -> usize {
        self.pages.len() - PAGE_SIZE
    }

    fn word(&mut self, w: u32) {
        let at = self.page_at() + PAGE_HEADER + self.used;
        self.pages[at..at + 4].copy_from_slice(&w.to_le_bytes());
        self.used += 4;
    }

    /// A zeroed page whose first event is at `ts`.
    fn open_page(&mut self, ts: u64) {
        self.pages.resize(self.pages.len() + PAGE_SIZE, 0);
        let at = self.page_at();
        self.pages[at..at + 8].copy_from_slice(&ts.to_le_bytes());
    }

    /// Close the page being filled (`commit`: its bytes of events); a chunk's worth of
    /// pages to the store.
    fn close_page(&mut self, store: &mut impl PageStore) -> io::Result<()> {
        if self.used == 0 {
            return Ok(());
        }
        let at = self.page_at();
        self.pages[at + 8..at + 16].copy_from_slice(&(self.used as u64).to_le_bytes());
        self.used = 0;
        if self.pages.len() == CHUNK {
            store.store(self.cpu, &mut self.pages)?;
        }
        Ok(())
    }

    /// Close the last page and store what is left.
    pub fn finish(mut self, store: &mut impl PageStore) -> io::Result<()> {
        self.close_page(store)?;
        if self.pages.is_empty() {
            return Ok(());
        }
        store.store(self.cpu, &mut self.pages)
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// Read pages back as `trace-cmd.dat.v6(5)` and libtraceevent's kbuffer do: the page's
    /// time, then per event its delta (a time extend adds `array[0] << 27` to the next), its
    /// length from `type_len` (or the word after the header, which counts itself).
    pub fn decode(pages: &[u8]) -> Vec<(u64, Vec<u8>)> {
        let word = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let mut out = vec![];
        for page in pages.chunks(PAGE_SIZE) {
            let mut ts = u64::from_le_bytes(page[..8].try_into().unwrap());
            let commit = u64::from_le_bytes(page[8..16].try_into().unwrap()) as usize;
            let mut at = PAGE_HEADER;
            while at < PAGE_HEADER + commit {
                let h = word(page, at);
                let (type_len, delta) = (h & 31, (h >> 5) as u64);
                at += 4;
                match type_len {
                    30 => {
                        ts += delta + ((word(page, at) as u64) << 27);
                        at += 4;
                    }
                    0 => {
                        let len = word(page, at) as usize - 4;
                        ts += delta;
                        out.push((ts, page[at + 4..at + 4 + len].to_vec()));
                        at += 4 + len;
                    }
                    n => {
                        ts += delta;
                        out.push((ts, page[at..at + 4 * n as usize].to_vec()));
                        at += 4 * n as usize;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn records_read_back_with_their_times() {
        let mut raw = vec![Spill::default()];
        let mut b = CpuBuffer::new(0);
        let mut written = vec![];
        let mut ts = 1_000_000_000u64;
        for i in 0..3000u64 {
            // Short and long records; gaps that fit 27 bits and ones that need an extend
            // (2^27 ns is 134 ms).
            ts += [7, 1 << 26, (1 << 27) + 5, 3 << 30][i as usize % 4];
            let len = [8, 112, 116, 300][i as usize % 4];
            let rec: Vec<u8> = (0..len).map(|j| (i + j) as u8).collect();
            b.write(ts, rec.len(), &mut raw, |place| place.copy_from_slice(&rec))
                .unwrap();
            written.push((ts, rec));
        }
        b.finish(&mut raw).unwrap();
        let raw = raw.pop().unwrap();
        let size = raw.len();
        let mut pages = vec![];
        raw.copy_to(&mut pages).unwrap();
        assert_eq!(pages.len() as u64, size);
        assert_eq!(size % PAGE_SIZE as u64, 0);
        assert!(size > PAGE_SIZE as u64, "the records span pages");
        assert_eq!(decode(&pages), written);
    }

    #[test]
    fn an_empty_buffer_has_no_pages() {
        let mut raw = vec![Spill::default()];
        CpuBuffer::new(0).finish(&mut raw).unwrap();
        assert_eq!(raw[0].len(), 0);
    }
}
