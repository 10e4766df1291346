//! Outputs written whole or not at all: each file is written under a temporary name beside
//! its destination and renamed over it only when the run has succeeded, so that an error or
//! Ctrl-C leaves neither a half-written file nor a clobbered old one. A symbolic link is
//! followed (its target gets the output, the link stays), and a destination that is not a
//! regular file (a device such as /dev/null, a FIFO) is written in place, as it comes.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file being written under a temporary name (or in place: `tmp` is None); the temporary
/// file is removed when dropped uncommitted.
#[derive(Debug)]
pub struct Staged {
    path: PathBuf,
    tmp: Option<PathBuf>,
    committed: bool,
}

impl Staged {
    /// Create the temporary file for `path` (which proves the destination writable), or
    /// open `path` itself when it is a device or a FIFO.
    pub fn create(path: &Path) -> io::Result<(Staged, File)> {
        let path = resolve(path)?;
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => return Err(io::Error::other("is a directory")),
            Ok(m) if !m.is_file() => {
                let file = OpenOptions::new().write(true).open(&path)?;
                let staged = Staged {
                    path,
                    tmp: None,
                    committed: false,
                };
                return Ok((staged, file));
            }
            _ => {}
        }
        let name = path
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy());
        let tmp = path.with_file_name(format!(".{name}.schedlab-{}.tmp", std::process::id()));
        let file = File::create(&tmp)?;
        let staged = Staged {
            path,
            tmp: Some(tmp),
            committed: false,
        };
        Ok((staged, file))
    }

    /// Whether it is written in place (a device or a FIFO).
    pub fn in_place(&self) -> bool {
        self.tmp.is_none()
    }

    /// Where the file is being written.
    pub fn tmp(&self) -> &Path {
        self.tmp.as_deref().unwrap_or(&self.path)
    }

    /// Point the file at a destination chosen late (an rt-app log's name needs the thread's).
    pub fn retarget(&mut self, path: PathBuf) {
        self.path = path;
    }

    /// Move the finished file into place.
    pub fn commit(mut self) -> io::Result<()> {
        if let Some(tmp) = &self.tmp {
            std::fs::rename(tmp, &self.path)?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let (false, Some(tmp)) = (self.committed, &self.tmp) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// `path` with its symbolic links followed to the file they name (which may not exist yet).
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&path) {
            Ok(target) => path = path.parent().unwrap_or(Path::new("")).join(target),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// The file `path` names, as a comparable identity: its device and inode if it exists,
/// else its absolute path with links followed. None for a device or a FIFO, which two
/// outputs may share (two outputs to /dev/null).
fn identity(path: &Path) -> Option<(u64, u64, PathBuf)> {
    let path = resolve(path).ok()?;
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() || m.is_dir() => Some((m.dev(), m.ino(), PathBuf::new())),
        Ok(_) => None,
        Err(_) => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let dir = std::fs::canonicalize(dir).ok()?;
            Some((0, 0, dir.join(path.file_name()?)))
        }
    }
}

/// The first output (named, e.g. "the trace") that would replace an input or another
/// output: its path and the message naming both, or None.
pub fn clash(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Option<(String, String)> {
    let mut seen: Vec<(&str, &Path, (u64, u64, PathBuf))> = inputs
        .iter()
        .filter_map(|&(name, path)| Some((name, path, identity(path)?)))
        .collect();
    let nr_inputs = seen.len();
    for &(name, path) in outputs {
        let Some(id) = identity(path) else { continue };
        if let Some(i) = seen.iter().position(|s| s.2 == id) {
            let (other, other_path, _) = &seen[i];
            let what = if i < nr_inputs {
                "would replace"
            } else {
                "is the same file as"
            };
            return Some((
                path.display().to_string(),
                format!(
                    "{name} {what} {other} ({}): give each output a file of its own",
                    other_path.display()
                ),
            ));
        }
        seen.push((name, path, id));
    }
    None
}

/// An output directory: created if missing, and then removed again (if still empty) when
/// dropped uncommitted.
#[derive(Debug)]
pub struct StagedDir {
    dir: Option<PathBuf>,
}

impl StagedDir {
    pub fn create(dir: &Path) -> io::Result<StagedDir> {
        let created = !dir.exists();
        std::fs::create_dir_all(dir)?;
        Ok(StagedDir {
            dir: created.then(|| dir.to_path_buf()),
        })
    }

    pub fn commit(mut self) {
        self.dir = None;
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir(dir);
        }
    }
}
