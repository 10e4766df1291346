//! Reading trace.dat (`trace-cmd.dat.v6(5)`, `trace-cmd.dat.v7(5)`), what `trace-cmd
//! record` writes: the metadata (`header.rs`), each event's format (`format.rs`), each CPU's
//! pages (`pages.rs`), and the records of all CPUs in time order, as `trace-cmd report`
//! prints them (the earliest first; at equal times, the lower CPU's). Pages are read one at a
//! time (v6) or one compressed chunk at a time (v7), so memory stays bounded whatever the
//! trace's length.

pub mod format;
mod header;
mod pages;
mod sched;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::path::Path;

pub use self::format::{EventFormat, Field, Kind, Record};
pub use self::header::Meta;
pub use self::pages::PageLayout;
use self::pages::{CpuPages, Ctx};
pub use self::sched::SchedFields;
use crate::error::InputError;

/// An open trace.dat.
pub struct Trace {
    file: File,
    path: String,
    pub meta: Meta,
}

impl Trace {
    /// Open `path` and read its metadata.
    pub fn open(path: &Path) -> Result<Trace, InputError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| InputError::new(&name, e.to_string()))?;
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(InputError::new(&name, "not a regular file"));
        }
        let meta = Meta::read(&file, &name)?;
        Ok(Trace {
            file,
            path: name,
            meta,
        })
    }

    /// Hand `f` each record, in time order: its time (with the trace's offset), its CPU
    /// and its bytes. Returns the pages that said events were lost before them.
    pub fn for_each(
        &self,
        mut f: impl FnMut(u64, u32, Record) -> Result<(), InputError>,
    ) -> Result<u64, InputError> {
        let mut zstd = zstd::bulk::Decompressor::new()
            .map_err(|e| InputError::new(&self.path, e.to_string()))?;
        let mut ctx = Ctx {
            file: &self.file,
            path: &self.path,
            layout: self.meta.layout,
            zstd: &mut zstd,
        };
        let mut cpus: Vec<CpuPages> = (self.meta.cpus.iter())
            .map(|&(cpu, source)| CpuPages::new(cpu, source))
            .collect();
        let mut heap = BinaryHeap::with_capacity(cpus.len());
        for (i, c) in cpus.iter_mut().enumerate() {
            if c.advance(&mut ctx)? {
                heap.push(Reverse((c.ts, c.cpu, i)));
            }
        }
        while let Some(Reverse((ts, cpu, i))) = heap.pop() {
            let c = &mut cpus[i];
            let at = ts.saturating_add_signed(self.meta.offset);
            f(at, cpu, Record { data: c.record() })?;
            if c.advance(&mut ctx)? {
                heap.push(Reverse((c.ts, c.cpu, i)));
            }
        }
        Ok(cpus.iter().map(|c| c.lost).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::format::tests::SCHED_SWITCH;
    use super::*;
    use std::path::PathBuf;

    const PAGE: usize = 4096;
    const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
        \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
        \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
        \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

    /// A 64-byte sched_switch record from `prev` to `next` (pid `prev`'s context).
    fn switch(prev: i32, next: i32) -> Vec<u8> {
        let mut r = vec![0u8; 64];
        r[..2].copy_from_slice(&316u16.to_le_bytes());
        r[4..8].copy_from_slice(&prev.to_le_bytes());
        r[8..12].copy_from_slice(b"ping");
        r[24..28].copy_from_slice(&prev.to_le_bytes());
        r[40..44].copy_from_slice(b"pong");
        r[56..60].copy_from_slice(&next.to_le_bytes());
        r
    }

    /// A page at `ts` holding `events` (raw bytes), `flags` in its commit word's top bits.
    fn page(ts: u64, events: &[u8], flags: u64) -> Vec<u8> {
        let mut p = vec![0u8; PAGE];
        p[..8].copy_from_slice(&ts.to_le_bytes());
        p[8..16].copy_from_slice(&(events.len() as u64 | flags).to_le_bytes());
        p[16..16 + events.len()].copy_from_slice(events);
        p
    }

    fn word(type_len: u32, delta: u32) -> [u8; 4] {
        (type_len | (delta << 5)).to_le_bytes()
    }

    /// A version 6 file: the header page, sched_switch's format, two comms, two CPUs (the
    /// CPUCOUNT option), and each CPU's pages.
    fn v6(cpus: [Vec<u8>; 2]) -> Vec<u8> {
        let mut f = b"\x17\x08\x44tracing6\0\0\x08".to_vec();
        f.extend_from_slice(&(PAGE as u32).to_le_bytes());
        let sized = |f: &mut Vec<u8>, tag: &[u8], text: &str| {
            f.extend_from_slice(tag);
            f.extend_from_slice(&(text.len() as u64).to_le_bytes());
            f.extend_from_slice(text.as_bytes());
        };
        sized(&mut f, b"header_page\0", HEADER_PAGE);
        sized(&mut f, b"header_event\0", "# compressed entry header\n");
        f.extend_from_slice(&0u32.to_le_bytes()); // ftrace events
        f.extend_from_slice(&1u32.to_le_bytes()); // systems
        f.extend_from_slice(b"sched\0");
        f.extend_from_slice(&1u32.to_le_bytes());
        sized(&mut f, b"", SCHED_SWITCH);
        f.extend_from_slice(&0u32.to_le_bytes()); // kallsyms
        f.extend_from_slice(&0u32.to_le_bytes()); // printk
        sized(&mut f, b"", "42 ping\n43 pong\n");
        f.extend_from_slice(&2u32.to_le_bytes());
        f.extend_from_slice(b"options  \0");
        f.extend_from_slice(&8u16.to_le_bytes()); // CPUCOUNT
        f.extend_from_slice(&4u32.to_le_bytes());
        f.extend_from_slice(&2u32.to_le_bytes());
        f.extend_from_slice(&0u16.to_le_bytes());
        f.extend_from_slice(b"flyrecord\0");
        let mut at = (f.len() + 32).next_multiple_of(PAGE) as u64;
        for c in &cpus {
            f.extend_from_slice(&at.to_le_bytes());
            f.extend_from_slice(&(c.len() as u64).to_le_bytes());
            at += c.len() as u64;
        }
        f.resize(f.len().next_multiple_of(PAGE), 0);
        for c in cpus {
            f.extend_from_slice(&c);
        }
        f
    }

    /// Every kind of event a page holds, worked out by hand. CPU 0's page starts at 1000:
    /// switch 42→43 (delta 0: at 1000); a time extend of 2^27 + 5 (array 1, delta 5); switch
    /// 43→42 with delta 3 (at 1000 + 134217728 + 8 = 134218736); a discarded event (padding
    /// with delta 7 and 8 bytes); switch 42→0 in the long form (type_len 0, length 68) with
    /// delta 2 (at 134218745); padding to the page's end. CPU 1: switch 43→42 at 1000 (CPU
    /// 0's first comes first at that instant), then a page at 5000, after lost events.
    fn trace_file(dir: &Path) -> PathBuf {
        let mut e0 = Vec::new();
        e0.extend_from_slice(&word(16, 0));
        e0.extend(switch(42, 43));
        e0.extend_from_slice(&word(30, 5));
        e0.extend_from_slice(&1u32.to_le_bytes());
        e0.extend_from_slice(&word(16, 3));
        e0.extend(switch(43, 42));
        e0.extend_from_slice(&word(29, 7));
        e0.extend_from_slice(&8u32.to_le_bytes());
        e0.extend_from_slice(&[0; 4]);
        e0.extend_from_slice(&word(0, 2));
        e0.extend_from_slice(&68u32.to_le_bytes());
        e0.extend(switch(42, 0));
        e0.extend_from_slice(&word(29, 0));
        let mut e1 = word(16, 0).to_vec();
        e1.extend(switch(43, 42));
        let mut e2 = word(16, 0).to_vec();
        e2.extend(switch(42, 43));
        let cpu1 = [page(1000, &e1, 0), page(5000, &e2, 1 << 31)].concat();
        let path = dir.join("hand.dat");
        std::fs::write(&path, v6([page(1000, &e0, 0), cpu1])).unwrap();
        path
    }

    #[test]
    fn a_hand_built_trace_reads_as_worked_out() {
        let dir = tempfile::tempdir().unwrap();
        let trace = Trace::open(&trace_file(dir.path())).unwrap();
        assert_eq!((trace.meta.version, trace.meta.nr_cpus), (6, 2));
        assert_eq!(
            trace.meta.cmdlines,
            [(42, "ping".into()), (43, "pong".into())]
        );
        let f = &trace.meta.events[&316];
        let (prev, next) = (f.field("prev_pid").unwrap(), f.field("next_pid").unwrap());
        let mut got = vec![];
        let lost = trace
            .for_each(|ts, cpu, r| {
                got.push((ts, cpu, r.int(prev), r.int(next), r.data.len()));
                Ok(())
            })
            .unwrap();
        let want = [
            (1000, 0, 42, 43, 64),
            (1000, 1, 43, 42, 64),
            (5000, 1, 42, 43, 64),
            (134_218_736, 0, 43, 42, 64),
            (134_218_745, 0, 42, 0, 64),
        ];
        assert_eq!(got, want);
        assert_eq!(lost, 1);
    }

    /// 33,000 switches on one CPU, each to a new pid: more threads than a workload may start
    /// (`MAX_THREADS`), which the replay refuses in one line naming the trace.
    #[test]
    fn a_trace_with_more_threads_than_a_workload_may_start_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut pages = vec![];
        let mut events = vec![];
        for pid in 1..=33_000 {
            if events.len() + 68 > PAGE - 16 {
                pages.extend(page(pid as u64, &events, 0));
                events.clear();
            }
            events.extend_from_slice(&word(16, 1));
            events.extend(switch(pid, pid + 1));
        }
        pages.extend(page(40_000, &events, 0));
        let path = dir.path().join("many.dat");
        std::fs::write(&path, v6([pages, vec![]])).unwrap();
        let err = crate::workload::replay::replay(
            &path,
            super::super::Conditions {
                platform: Some("smp:2"),
                ..Default::default()
            },
        )
        .err()
        .unwrap();
        let want = format!(
            "{}: 33001 threads, more than the 32768 a workload may start",
            path.display()
        );
        assert!(err.to_string().starts_with(&want), "{err}");
    }

    /// Each damage named where it is: not a trace, an unknown version, a file cut short, a
    /// page committing more than it holds, an event past its page's commit, a page out of
    /// order.
    #[test]
    fn damaged_traces_are_refused_with_their_place() {
        let dir = tempfile::tempdir().unwrap();
        let good = std::fs::read(trace_file(dir.path())).unwrap();
        let data_at = good.len() - 3 * PAGE;
        let mut cases: Vec<(Vec<u8>, &str)> = vec![
            (b"hello world, no trace".to_vec(), "not a trace.dat file"),
            ([&good[..10], b"5\0"].concat(), "trace.dat version \"5\""),
            (good[..300].to_vec(), "past the file's end"),
            (good[..good.len() - 100].to_vec(), "past the file's end"),
        ];
        let mut commit = good.clone();
        commit[data_at + 8..data_at + 16].copy_from_slice(&5000u64.to_le_bytes());
        cases.push((commit, "commits 5000 bytes"));
        let mut long = good.clone();
        let page_end = data_at
            + 16
            + u64::from_le_bytes(good[data_at + 8..data_at + 16].try_into().unwrap()) as usize;
        long[page_end - 4..page_end].copy_from_slice(&word(28, 0));
        cases.push((long, "past its page's commit"));
        // CPU 1's second page (at 5000) set at 999, before its first's event at 1000.
        let mut order = good.clone();
        let cpu1_page2 = good.len() - PAGE;
        order[cpu1_page2..cpu1_page2 + 8].copy_from_slice(&999u64.to_le_bytes());
        cases.push((
            order,
            "CPU 1's page starts at 999 ns, before its last event (1000 ns)",
        ));
        for (i, (bytes, message)) in cases.into_iter().enumerate() {
            let path = dir.path().join(format!("bad{i}.dat"));
            std::fs::write(&path, bytes).unwrap();
            let err = Trace::open(&path)
                .and_then(|t| t.for_each(|_, _, _| Ok(())))
                .unwrap_err();
            let text = err.to_string();
            assert!(text.starts_with(&path.display().to_string()), "{text}");
            assert!(text.contains(message), "case {i}: {text}");
        }
    }
}
