//! Pipes and Unix stream sockets as the kernel keeps them, for hackbench and perf bench
//! pipe: what a write or read of n bytes finds, and whom it wakes (6.12's `pipe_write`,
//! `pipe_read`, `unix_stream_sendmsg`, `unix_stream_recvmsg`). Every wakeup is a sync one
//! (`wake_up_interruptible_sync_poll`). Writes and reads are of at most `PIPE_BUF` bytes
//! (the generators' limit): a pipe write is then atomic, a socket write one skb.
//!
//! A pipe is a ring of 16 page buffers; a write merges into the last page while it fits and
//! otherwise takes a free buffer; full means every buffer in use. Its waiters queue
//! exclusively (one woken at a time, each passing the turn on). A socket charges each skb's
//! true size to its sender's `sk_wmem_alloc` against `sk_sndbuf`; a reader freeing skbs
//! wakes every waiting writer once a quarter of the send buffer is in use or less.

use std::collections::VecDeque;

use crate::workload::program::ChanKind;

/// `PAGE_SIZE`.
const PAGE_SIZE: u32 = 4096;
/// `PIPE_DEF_BUFFERS`: a pipe's buffers (16 pages: 64 KiB).
const PIPE_DEF_BUFFERS: usize = 16;
/// `net.core.wmem_default` (`SK_WMEM_MAX` on 64-bit): a socket's `sk_sndbuf`.
pub const UNIX_SNDBUF: u64 = 212_992;
/// x86_64 6.12: `SKB_DATA_ALIGN(sizeof(struct sk_buff))` and of `struct skb_shared_info`.
const SKB_HEAD: u64 = 256;
const SKB_SHINFO: u64 = 320;

/// `skb->truesize` of a socket write of `len` bytes (`__alloc_skb` → `SKB_TRUESIZE`): the
/// data and shared info rounded up to their kmalloc bucket, plus the sk_buff itself. 100
/// bytes: 128 + 320 = 448 → 512 → 192 + 256 + 320 = 768.
pub fn unix_skb_truesize(len: u32) -> u64 {
    let data = (len as u64).div_ceil(64) * 64 + SKB_SHINFO;
    data.next_power_of_two() + SKB_HEAD
}

/// What a write or read did besides moving bytes: whom to wake.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wakes {
    /// Wake readers: one (a pipe) or all (a socket).
    pub readers: bool,
    /// Wake writers: one (a pipe) or all (a socket).
    pub writers: bool,
}

/// A pipe or a connected pair of Unix stream sockets, one way.
#[derive(Debug, Clone)]
pub struct Channel {
    pub kind: ChanKind,
    /// Unread bytes.
    bytes: u64,
    /// Pipe: each used buffer's unread bytes, oldest first; a socket: each skb's.
    bufs: VecDeque<u32>,
    /// Pipe: the last buffer's offset + len (where a merge would start).
    tail_end: u32,
    /// Socket: the sender's `sk_wmem_alloc` (1 when nothing is in flight).
    wmem: u64,
    /// Threads waiting to read and to write, in arrival order.
    pub readers: VecDeque<u32>,
    pub writers: VecDeque<u32>,
    /// Threads in `poll` for input, in arrival order: woken before the readers, the last
    /// first (`__pollwait` adds its entry at the wait queue's head, an exclusive reader at
    /// its tail, and `__wake_up_common` walks it from the head).
    pub pollers: Vec<u32>,
}

/// A write that cannot go on now: the writer waits (after waking readers, for a pipe
/// found empty).
pub struct Blocked(pub Wakes);

impl Channel {
    pub fn new(kind: ChanKind) -> Channel {
        Channel {
            kind,
            bytes: 0,
            bufs: VecDeque::new(),
            tail_end: 0,
            wmem: 1,
            readers: VecDeque::new(),
            writers: VecDeque::new(),
            pollers: Vec::new(),
        }
    }

    /// `poll` finds input (`pipe_poll`, `unix_poll`: EPOLLIN).
    pub fn readable(&self) -> bool {
        self.bytes > 0
    }

    /// Write `n` bytes (≤ `PAGE_SIZE`); `waited`: the writer is back from a wait.
    pub fn write(&mut self, n: u32, waited: bool) -> Result<Wakes, Blocked> {
        match self.kind {
            ChanKind::Pipe => self.pipe_write(n, waited),
            ChanKind::Unix => self.unix_send(n),
        }
    }

    /// Read `n` bytes if there are that many; `waited`: the reader is back from a wait.
    pub fn read(&mut self, n: u32, waited: bool) -> Option<Wakes> {
        if self.bytes < n as u64 {
            return None;
        }
        Some(match self.kind {
            ChanKind::Pipe => self.pipe_read(n, waited),
            ChanKind::Unix => self.unix_recv(n),
        })
    }

    fn pipe_full(&self) -> bool {
        self.bufs.len() >= PIPE_DEF_BUFFERS
    }

    /// `pipe_write`: merge into the last page (not after a wait, which only waits for a
    /// free buffer), else a new buffer, else wait; wake a reader if the pipe was empty, and
    /// the next writer after a wait if room is left.
    fn pipe_write(&mut self, n: u32, waited: bool) -> Result<Wakes, Blocked> {
        let was_empty = self.bufs.is_empty();
        let merge = !waited && !was_empty && self.tail_end + n <= PAGE_SIZE;
        if merge {
            *self.bufs.back_mut().expect("not empty") += n;
            self.tail_end += n;
        } else if !self.pipe_full() {
            self.bufs.push_back(n);
            self.tail_end = n;
        } else {
            let wakes = Wakes {
                readers: was_empty,
                writers: false,
            };
            return Err(Blocked(wakes));
        }
        self.bytes += n as u64;
        Ok(Wakes {
            readers: was_empty,
            writers: waited && !self.pipe_full(),
        })
    }

    /// `pipe_read`: take `n` bytes from the oldest buffers, freeing the drained ones; wake a
    /// writer if the pipe was full when the read began, and the next reader after a wait if
    /// bytes are left.
    fn pipe_read(&mut self, n: u32, waited: bool) -> Wakes {
        let was_full = self.pipe_full();
        self.take(n);
        Wakes {
            readers: waited && self.bytes > 0,
            writers: was_full,
        }
    }

    /// Consume `n` bytes from the oldest buffers or skbs; how many were drained and freed.
    fn take(&mut self, mut n: u32) -> u64 {
        self.bytes -= n as u64;
        let mut freed = 0;
        while n > 0 {
            let head = self.bufs.front_mut().expect("bytes are buffered");
            let k = n.min(*head);
            *head -= k;
            n -= k;
            if *head == 0 {
                self.bufs.pop_front();
                freed += 1;
            }
        }
        if self.bufs.is_empty() {
            self.tail_end = 0;
        }
        freed
    }

    /// `unix_stream_sendmsg`: an skb of `n` bytes if the send buffer has room
    /// (`sock_alloc_send_pskb`), queued on the reader, who is woken (`sk_data_ready`).
    fn unix_send(&mut self, n: u32) -> Result<Wakes, Blocked> {
        if self.wmem >= UNIX_SNDBUF {
            return Err(Blocked(Wakes::default()));
        }
        self.wmem += unix_skb_truesize(n);
        self.bufs.push_back(n);
        self.bytes += n as u64;
        Ok(Wakes {
            readers: true,
            writers: false,
        })
    }

    /// `unix_stream_recvmsg`: copy `n` bytes out; each skb drained is freed (`sock_wfree`),
    /// and once the sender's send buffer is a quarter full or less its writers are woken
    /// (`unix_write_space`). Simplified: every skb of a channel has the size of the first
    /// still queued (the generators write one size per channel).
    fn unix_recv(&mut self, n: u32) -> Wakes {
        let size = *self.bufs.front().expect("bytes are buffered");
        let freed = self.take(n);
        self.wmem -= freed * unix_skb_truesize(size);
        Wakes {
            readers: false,
            writers: freed > 0 && self.wmem << 2 <= UNIX_SNDBUF,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_holds_sixteen_pages_of_merged_writes() {
        // 100-byte writes: 40 fit a 4096-byte page (4000), so 16 pages take 640; the 641st
        // waits, having found the pipe non-empty (no reader to wake).
        let mut p = Channel::new(ChanKind::Pipe);
        let first = p.write(100, false).ok().unwrap();
        assert_eq!(
            first,
            Wakes {
                readers: true,
                writers: false
            },
            "was empty"
        );
        for _ in 1..640 {
            assert_eq!(p.write(100, false).ok(), Some(Wakes::default()));
        }
        assert!(matches!(p.write(100, false), Err(Blocked(w)) if w == Wakes::default()));
        // A read from the full pipe wakes a writer, though no page is free yet: the woken
        // writer only takes a new buffer, so it waits again until 40 reads free one.
        assert!(p.read(100, false).unwrap().writers);
        assert!(p.write(100, true).is_err());
        for _ in 1..40 {
            p.read(100, false).unwrap();
        }
        assert_eq!(
            p.write(100, true).ok(),
            Some(Wakes {
                readers: false,
                writers: false
            })
        );
    }

    #[test]
    fn a_pipe_read_waits_for_the_whole_message() {
        let mut p = Channel::new(ChanKind::Pipe);
        assert_eq!(p.read(4, false), None);
        p.write(4, false).ok().unwrap();
        assert_eq!(p.read(4, false), Some(Wakes::default()));
        assert_eq!(p.read(4, false), None);
    }

    #[test]
    fn a_socket_buffers_until_its_send_buffer_is_charged_then_wakes_writers_at_a_quarter() {
        // 100-byte skbs are 768 bytes true size; wmem starts at 1. Sends go on while
        // wmem < 212992: 1 + 768·277 = 212737 allows a 278th, then 213505 refuses.
        assert_eq!(unix_skb_truesize(100), 768);
        assert_eq!(unix_skb_truesize(4), 768);
        let mut s = Channel::new(ChanKind::Unix);
        for _ in 0..278 {
            assert_eq!(
                s.write(100, false).ok(),
                Some(Wakes {
                    readers: true,
                    writers: false
                })
            );
        }
        assert!(s.write(100, false).is_err());
        // Writers wake when (wmem << 2) <= 212992, wmem <= 53248: 1 + 768·k with k <= 69
        // skbs left, after 278 − 69 = 209 reads.
        for _ in 0..208 {
            assert!(!s.read(100, false).unwrap().writers);
        }
        assert!(s.read(100, false).unwrap().writers);
    }
}
