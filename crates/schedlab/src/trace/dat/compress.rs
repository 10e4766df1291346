//! trace.dat v7's compressed CPU data (`trace-cmd.dat.v7(5)`, "compression format of the
//! trace data"): each CPU's pages in chunks, each chunk a zstd frame after its compressed
//! and uncompressed sizes, the chunk count first. A thread of its own compresses the chunks
//! as the run goes, so that a run on two cores pays little for it; each CPU's chunks keep
//! their order, so the output is the same whatever the threads' timing. At most `PENDING`
//! groups of `GROUP` chunks wait for it: where the run outpaces zstd, it waits instead of queueing pages
//! without bound (a 10-minute run held 160 MiB of them).

use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::ring_buffer::{PageStore, CHUNK};
use super::spill::Spill;

/// zstd's level: a fast one (trace-cmd leaves the library's default, 3). On the scenario
/// bench's pages, -1 leaves 11% more bytes than level 1 and keeps up with the run better.
const LEVEL: i32 = -1;

/// Chunks handed over at a time.
const GROUP: usize = 16;
/// Groups handed over and not yet compressed, at most (640 KiB each).
const PENDING: usize = 4;

/// The name and version trace.dat's compression header records.
pub fn name() -> (&'static str, &'static str) {
    ("zstd", zstd::zstd_safe::version_string())
}

/// One CPU's compressed chunks.
#[derive(Debug, Default)]
pub struct Chunks {
    count: u32,
    data: Spill,
}

impl Chunks {
    /// Its size in the file (nothing for a CPU without pages).
    pub fn size(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            4 + self.data.len()
        }
    }

    pub fn copy_to(self, out: &mut impl Write) -> io::Result<()> {
        if self.count > 0 {
            out.write_all(&self.count.to_le_bytes())?;
            self.data.copy_to(out)?;
        }
        Ok(())
    }
}

/// Chunks, each with its CPU.
type Group = Vec<(usize, Vec<u8>)>;

/// The compressing thread, and the chunks gathered for it.
pub struct Compressor {
    /// Chunks not yet handed over: they go `GROUP` at a time, so that the thread is woken
    /// once for each group rather than for each chunk.
    ready: Group,
    to: SyncSender<Group>,
    /// Compressed chunks' buffers, for reuse.
    spare: Receiver<Vec<u8>>,
    worker: JoinHandle<io::Result<Vec<Chunks>>>,
}

impl Compressor {
    /// Start compressing the chunks of `nr_cpus` CPUs.
    pub fn start(nr_cpus: usize) -> io::Result<Compressor> {
        let mut zstd = zstd::bulk::Compressor::new(LEVEL)?;
        let (to, from) = sync_channel::<Group>(PENDING);
        let (give_back, spare) = sync_channel::<Vec<u8>>(GROUP * (PENDING + 1));
        let worker = std::thread::Builder::new()
            .name("schedlab-zstd".into())
            .spawn(move || {
                let mut cpus: Vec<Chunks> = (0..nr_cpus).map(|_| Chunks::default()).collect();
                let mut frame = Vec::new();
                for (cpu, mut chunk) in from.into_iter().flatten() {
                    frame.clear();
                    frame.reserve(zstd::zstd_safe::compress_bound(chunk.len()));
                    zstd.compress_to_buffer(&chunk, &mut frame)?;
                    let c = &mut cpus[cpu];
                    c.data.push(&(frame.len() as u32).to_le_bytes())?;
                    c.data.push(&(chunk.len() as u32).to_le_bytes())?;
                    c.data.push(&frame)?;
                    c.count += 1;
                    chunk.clear();
                    let _ = give_back.try_send(chunk);
                }
                Ok(cpus)
            })?;
        Ok(Compressor {
            ready: Vec::with_capacity(GROUP),
            to,
            spare,
            worker,
        })
    }

    /// Hand the chunks gathered to the thread.
    fn hand_over(&mut self) {
        if !self.ready.is_empty() {
            let group = std::mem::replace(&mut self.ready, Vec::with_capacity(GROUP));
            // Refused: the thread stopped on an error, which `finish` returns.
            let _ = self.to.send(group);
        }
    }

    /// Every chunk compressed, the chunks of each CPU.
    pub fn finish(mut self) -> io::Result<Vec<Chunks>> {
        self.hand_over();
        drop(self.to);
        self.worker
            .join()
            .map_err(|_| io::Error::other("the trace's compressor failed"))?
    }
}

impl PageStore for Compressor {
    fn store(&mut self, cpu: usize, pages: &mut Vec<u8>) -> io::Result<()> {
        let empty = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        self.ready.push((cpu, std::mem::replace(pages, empty)));
        if self.ready.len() == GROUP {
            self.hand_over();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::ring_buffer::tests::decode;
    use super::super::ring_buffer::{CpuBuffer, PAGES_IN_CHUNK, PAGE_SIZE};
    use super::*;

    /// A CPU's compressed data back to pages, as `tracecmd_load_chunks_info` and
    /// `tracecmd_uncompress_chunk` read it.
    fn uncompress(data: &[u8]) -> Vec<u8> {
        let word = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let (mut pages, mut at) = (vec![], 4);
        for _ in 0..word(0) {
            let (zsize, size) = (word(at), word(at + 4));
            let chunk = zstd::bulk::decompress(&data[at + 8..at + 8 + zsize], size).unwrap();
            assert_eq!((chunk.len(), size % PAGE_SIZE), (size, 0));
            pages.extend(chunk);
            at += 8 + zsize;
        }
        assert_eq!(at, data.len());
        pages
    }

    #[test]
    fn each_cpu_reads_back_in_order() {
        let mut c = Compressor::start(2).unwrap();
        let mut cpus = [CpuBuffer::new(0), CpuBuffer::new(1)];
        let mut written = [vec![], vec![]];
        for i in 0..20_000u64 {
            let cpu = (i % 3 == 0) as usize;
            let rec: Vec<u8> = (0..48).map(|j| (i * 7 + j) as u8).collect();
            cpus[cpu]
                .write(i * 1000, rec.len(), &mut c, |p| p.copy_from_slice(&rec))
                .unwrap();
            written[cpu].push((i * 1000, rec));
        }
        for b in cpus {
            b.finish(&mut c).unwrap();
        }
        for (chunks, w) in c.finish().unwrap().into_iter().zip(&written) {
            let mut data = vec![];
            let size = chunks.size();
            chunks.copy_to(&mut data).unwrap();
            assert_eq!(data.len() as u64, size);
            let pages = uncompress(&data);
            assert!(pages.len() > PAGES_IN_CHUNK * PAGE_SIZE, "several chunks");
            assert_eq!(&decode(&pages), w);
        }
    }
}
