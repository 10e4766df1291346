//! One CPU's ring buffer as the kernel lays out its pages (`kernel/trace/ring_buffer.c`),
//! which trace.dat stores as they are: a page is `struct buffer_data_page` (the time of its
//! first event, the bytes committed, the data), and each event a 4-byte header of
//! `type_len:5, time_delta:27` (the time since the previous event) and its record.
//! Full pages go to an anonymous temporary file, so that a long run's trace costs no
//! memory.

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};

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

/// A CPU's pages.
pub struct CpuBuffer {
    page: Vec<u8>,
    /// Bytes of events in `page` after its header.
    used: usize,
    /// The time of the last event written.
    last: u64,
    /// The full pages.
    full: Option<BufWriter<File>>,
    nr_full: u64,
}

impl CpuBuffer {
    pub fn new() -> CpuBuffer {
        CpuBuffer {
            page: vec![0; PAGE_SIZE],
            used: 0,
            last: 0,
            full: None,
            nr_full: 0,
        }
    }

    /// Append `record` (at most `MAX_RECORD` bytes) at time `ts` (never before the last):
    /// `rb_update_event`'s header, after a time extend when the delta overflows 27 bits
    /// (`rb_add_time_stamp`); a page that cannot hold it is closed and the next starts at
    /// `ts` with a delta of 0.
    pub fn write(&mut self, ts: u64, record: &[u8]) -> io::Result<()> {
        debug_assert!(record.len() <= MAX_RECORD && ts >= self.last);
        let len = record.len().next_multiple_of(4);
        let need = if len <= MAX_SMALL_DATA { 4 } else { 8 } + len;
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
        if len <= MAX_SMALL_DATA {
            self.word((len / 4) as u32 | ((delta as u32) << 5));
        } else {
            self.word((delta as u32) << 5);
            self.word(len as u32 + 4);
        }
        let at = PAGE_HEADER + self.used;
        self.page[at..at + record.len()].copy_from_slice(record);
        self.page[at + record.len()..at + len].fill(0);
        self.used += len;
        self.last = ts;
        Ok(())
    }

    fn word(&mut self, w: u32) {
        let at = PAGE_HEADER + self.used;
        self.page[at..at + 4].copy_from_slice(&w.to_le_bytes());
        self.used += 4;
    }

    /// Move the page being filled to the full ones (`commit`: its bytes of events).
    fn close_page(&mut self) -> io::Result<()> {
        if self.used == 0 {
            return Ok(());
        }
        self.page[8..16].copy_from_slice(&(self.used as u64).to_le_bytes());
        self.page[PAGE_HEADER + self.used..].fill(0);
        let full = match &mut self.full {
            Some(f) => f,
            None => self.full.insert(BufWriter::with_capacity(
                4 * PAGE_SIZE,
                tempfile::tempfile()?,
            )),
        };
        full.write_all(&self.page)?;
        self.nr_full += 1;
        self.used = 0;
        Ok(())
    }

    /// Close the last page: the buffer's size in bytes, and its pages to read.
    pub fn finish(mut self) -> io::Result<(u64, Option<File>)> {
        self.close_page()?;
        let size = self.nr_full * PAGE_SIZE as u64;
        let Some(full) = self.full else {
            return Ok((0, None));
        };
        let mut file = full.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        Ok((size, Some(file)))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// Read pages back as `trace-cmd.dat.v6(5)` and libtraceevent's kbuffer do: the page's
    /// time, then per event its delta (a time extend adds `array[0] << 27` to the next), its
    /// length from `type_len` (or the word after the header, which counts itself).
    fn decode(pages: &[u8]) -> Vec<(u64, Vec<u8>)> {
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
        let mut b = CpuBuffer::new();
        let mut written = vec![];
        let mut ts = 1_000_000_000u64;
        for i in 0..3000u64 {
            // Short and long records; gaps that fit 27 bits and ones that need an extend
            // (2^27 ns is 134 ms).
            ts += [7, 1 << 26, (1 << 27) + 5, 3 << 30][i as usize % 4];
            let len = [8, 112, 116, 300][i as usize % 4];
            let rec: Vec<u8> = (0..len).map(|j| (i + j) as u8).collect();
            b.write(ts, &rec).unwrap();
            written.push((ts, rec));
        }
        let (size, file) = b.finish().unwrap();
        let mut pages = vec![];
        file.unwrap().read_to_end(&mut pages).unwrap();
        assert_eq!(pages.len() as u64, size);
        assert_eq!(size % PAGE_SIZE as u64, 0);
        assert!(size > PAGE_SIZE as u64, "the records span pages");
        assert_eq!(decode(&pages), written);
    }

    #[test]
    fn an_empty_buffer_has_no_pages() {
        assert_eq!(CpuBuffer::new().finish().unwrap().0, 0);
    }
}
