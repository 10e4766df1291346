//! Bytes kept in memory up to `SPILL`, then in an anonymous temporary file: a CPU's pages
//! (trace.dat v6) or compressed chunks (v7) wait so until the file's header can be written,
//! and a long run's trace costs bounded memory.

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};

/// The bytes kept in memory before they move to the file.
const SPILL: usize = 1 << 20;

#[derive(Debug, Default)]
pub struct Spill {
    bytes: Vec<u8>,
    file: Option<BufWriter<File>>,
    in_file: u64,
}

impl Spill {
    pub fn push(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.bytes.extend_from_slice(bytes);
        if self.bytes.len() >= SPILL {
            let f = match &mut self.file {
                Some(f) => f,
                None => self.file.insert(BufWriter::new(tempfile::tempfile()?)),
            };
            f.write_all(&self.bytes)?;
            self.in_file += self.bytes.len() as u64;
            self.bytes.clear();
        }
        Ok(())
    }

    pub fn len(&self) -> u64 {
        self.in_file + self.bytes.len() as u64
    }

    pub fn copy_to(self, out: &mut impl Write) -> io::Result<()> {
        if let Some(f) = self.file {
            let mut f = f.into_inner().map_err(|e| e.into_error())?;
            f.rewind()?;
            io::copy(&mut f, out)?;
        }
        out.write_all(&self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_past_the_limit_come_back_in_order() {
        let mut s = Spill::default();
        let block: Vec<u8> = (0..=255).collect();
        for _ in 0..(SPILL / 256 * 2 + 3) {
            s.push(&block).unwrap();
        }
        assert!(s.file.is_some(), "it spilled");
        let n = s.len();
        let mut out = vec![];
        s.copy_to(&mut out).unwrap();
        assert_eq!(out.len() as u64, n);
        assert!(out.chunks(256).all(|c| c == block.as_slice()));
    }
}
