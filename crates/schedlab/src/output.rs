//! Outputs written whole or not at all: each file is written under a temporary name beside
//! its destination and renamed over it only when the run has succeeded, so that an error or
//! Ctrl-C leaves neither a half-written file nor a clobbered old one.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A file being written under a temporary name; removed when dropped uncommitted.
#[derive(Debug)]
pub struct Staged {
    path: PathBuf,
    tmp: PathBuf,
    committed: bool,
}

impl Staged {
    /// Create the temporary file for `path` (which proves the destination writable).
    pub fn create(path: &Path) -> io::Result<(Staged, File)> {
        if path.is_dir() {
            return Err(io::Error::other("is a directory"));
        }
        let name = path
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy());
        let tmp = path.with_file_name(format!(".{name}.schedlab-{}.tmp", std::process::id()));
        let file = File::create(&tmp)?;
        let staged = Staged {
            path: path.to_path_buf(),
            tmp,
            committed: false,
        };
        Ok((staged, file))
    }

    /// The temporary file's path.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// Point the file at a destination chosen late (an rt-app log's name needs the thread's).
    pub fn retarget(&mut self, path: PathBuf) {
        self.path = path;
    }

    /// Move the finished file into place.
    pub fn commit(mut self) -> io::Result<()> {
        std::fs::rename(&self.tmp, &self.path)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
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
