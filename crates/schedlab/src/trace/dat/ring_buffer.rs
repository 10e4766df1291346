//! One CPU's ring buffer as the kernel lays out its pages (`kernel/trace/ring_buffer.c`),
//! which trace.dat stores as they are: a page is `struct buffer_data_page` (the time of its
//! first event, the bytes committed, the data), and each event a 4-byte header of
//! `type_len:5, time_delta:27` (the time since the previous event) and its record. Full
//! pages are kept as they are (v6), or gathered in chunks for the compressor (v7).

use std::io;
use std::sync::mpsc::SyncSender;

pub use super::spill::Spill;

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

/// Where a CPU's full pages go.
enum Store {
    /// As they are (trace.dat v6).
    Raw(Spill),
    /// In chunks of `PAGES_IN_CHUNK` pages, handed to the compressor (v7).
    Chunks {
        chunk: Vec<u8>,
        cpu: usize,
        to: SyncSender<(usize, Vec<u8>)>,
    },
}

impl Store {
    fn push(&mut self, page: &[u8]) -> io::Result<()> {
        match self {
            Store::Raw(raw) => raw.push(page),
            Store::Chunks { chunk, .. } => {
                chunk.extend_from_slice(page);
                if chunk.len() == PAGES_IN_CHUNK * PAGE_SIZE {
                    self.send();
                }
                Ok(())
            }
        }
    }

    /// Hand the pages gathered to the compressor.
    fn send(&mut self) {
        if let Store::Chunks { chunk, cpu, to } = self {
            if !chunk.is_empty() {
                let full = std::mem::replace(chunk, Vec::with_capacity(PAGES_IN_CHUNK * PAGE_SIZE));
                // The compressor only stops once every sender is gone.
                let _ = to.send((*cpu, full));
            }
        }
    }
}

/// A CPU's buffer: the page being filled, and where full ones go.
pub struct CpuBuffer {
    page: Vec<u8>,
    /// Bytes of events in `page` after its header (0: no page open).
    used: usize,
    /// The time of the last event written.
    last: u64,
    store: Store,
}

impl CpuBuffer {
    /// Pages kept as they are.
    pub fn raw() -> CpuBuffer {
        CpuBuffer::with(Store::Raw(Spill::default()))
    }

    /// Pages in chunks sent, with `cpu`, to the compressor at `to`.
    pub fn chunked(cpu: usize, to: SyncSender<(usize, Vec<u8>)>) -> CpuBuffer {
        let chunk = Vec::with_capacity(PAGES_IN_CHUNK * PAGE_SIZE);
        CpuBuffer::with(Store::Chunks { chunk, cpu, to })
    }

    fn with(store: Store) -> CpuBuffer {
        CpuBuffer {
            page: vec![0; PAGE_SIZE],
            used: 0,
            last: 0,
            store,
        }
    }

    /// Append a record of `len` bytes (at most `MAX_RECORD`) at time `ts` (never before the
    /// last), which `fill` writes into its zeroed place: `rb_update_event`'s header, after a
    /// time extend when the delta overflows 27 bits (`rb_add_time_stamp`); a page that
    /// cannot hold it is closed and the next starts at `ts` with a delta of 0.
    pub fn write(&mut self, ts: u64, len: usize, fill: impl FnOnce(&mut [u8])) -> io::Result<()> {
        debug_assert!(len <= MAX_RECORD && ts >= self.last);
        let padded = len.next_multiple_of(4);
        let need = if padded <= MAX_SMALL_DATA { 4 } else { 8 } + padded;
        let mut delta = ts - self.last;
        let extend = if delta >> TS_SHIFT != 0 { 8 } else { 0 };
        if self.used == 0 || PAGE_HEADER + self.used + extend + need > PAGE_SIZE {
            self.close_page()?;
            self.page[..8].copy_from_slice(&ts.to_le_bytes());
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
        let at = PAGE_HEADER + self.used;
        fill(&mut self.page[at..at + len]);
        self.used += padded;
        self.last = ts;
        Ok(())
    }

    fn word(&mut self, w: u32) {
        let at = PAGE_HEADER + self.used;
        self.page[at..at + 4].copy_from_slice(&w.to_le_bytes());
        self.used += 4;
    }

    /// Store the page being filled (`commit`: its bytes of events) and clear it.
    fn close_page(&mut self) -> io::Result<()> {
        if self.used == 0 {
            return Ok(());
        }
        self.page[8..16].copy_from_slice(&(self.used as u64).to_le_bytes());
        self.store.push(&self.page)?;
        self.page.fill(0);
        self.used = 0;
        Ok(())
    }

    /// Close the last page: the pages as they are (None: all sent to the compressor).
    pub fn finish(mut self) -> io::Result<Option<Spill>> {
        self.close_page()?;
        match self.store {
            Store::Raw(raw) => Ok(Some(raw)),
            mut chunks => {
                chunks.send();
                Ok(None)
            }
        }
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
        let mut b = CpuBuffer::raw();
        let mut written = vec![];
        let mut ts = 1_000_000_000u64;
        for i in 0..3000u64 {
            // Short and long records; gaps that fit 27 bits and ones that need an extend
            // (2^27 ns is 134 ms).
            ts += [7, 1 << 26, (1 << 27) + 5, 3 << 30][i as usize % 4];
            let len = [8, 112, 116, 300][i as usize % 4];
            let rec: Vec<u8> = (0..len).map(|j| (i + j) as u8).collect();
            b.write(ts, rec.len(), |place| place.copy_from_slice(&rec))
                .unwrap();
            written.push((ts, rec));
        }
        let raw = b.finish().unwrap().unwrap();
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
        assert_eq!(CpuBuffer::raw().finish().unwrap().unwrap().len(), 0);
    }
}
