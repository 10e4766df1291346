//! What a run is asked to do (`RunSpec`), and the checks of its inputs: the workload, the
//! platform, the switches and where the outputs go, all made before any output is opened.

use std::path::{Path, PathBuf};

use crate::error::InputError;
use crate::kernel::Kernel;
use crate::platform::{self, Platform};
use crate::sched::features::Features;
use crate::sim::RunOptions;
use crate::time::Ns;
use crate::trace::{plat_info, TraceFormat};
use crate::workload::{self, Dialect, Workload};

/// Where a workload comes from: a file, or JSON text named by `origin` in error messages
/// (`<string>`, `<dict>`).
#[derive(Debug, Clone)]
pub enum WorkloadSource {
    File(PathBuf),
    Text { text: String, origin: String },
}

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub workload: WorkloadSource,
    /// A built-in name, `smp:N`, or a `.toml` file.
    pub platform: String,
    pub kernel: Kernel,
    pub sets: Vec<String>,
    pub features: Vec<String>,
    /// `--cgroup PATH:KEY=VALUE[,…]` and `--idle-cgroups N`.
    pub cgroups: Vec<String>,
    pub idle_cgroups: u64,
    pub duration: Option<Ns>,
    pub trace: Option<PathBuf>,
    /// The trace's format (None: from its extension).
    pub trace_format: Option<TraceFormat>,
    pub log_dir: Option<PathBuf>,
    /// Write `/proc/schedstat` as it reads at the end of the run there.
    pub schedstat: Option<PathBuf>,
    /// Keep events and signals as columns (`RunResult::frames`).
    pub frames: bool,
    pub dialect: Dialect,
}

/// A run's failure: bad input (exit status 2) or an output that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("{0}")]
    Io(String),
    /// The progress callback asked the run to stop; no output was left behind.
    #[error("interrupted")]
    Interrupted,
}

impl RunSpec {
    /// `workload` on `platform` under the default kernel (6.12), untraced, with nothing else
    /// asked: the other fields are set by struct update.
    pub fn new(workload: WorkloadSource, platform: &str) -> RunSpec {
        RunSpec {
            workload,
            platform: platform.into(),
            kernel: Kernel::DEFAULT,
            sets: vec![],
            features: vec![],
            cgroups: vec![],
            idle_cgroups: 0,
            duration: None,
            trace: None,
            trace_format: None,
            log_dir: None,
            schedstat: None,
            frames: false,
            dialect: Dialect::Workgen,
        }
    }

    /// The options the simulation takes from it.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            duration: self.duration,
            cgroups: self.cgroups.clone(),
            idle_cgroups: self.idle_cgroups,
        }
    }
}

/// A platform by name, `smp:N`, TOML file, LISA plat_info.yml, or a TOML description itself (any text with a
/// line break: what a sweep ships to workers that do not have the file).
pub fn load_platform(name: &str) -> Result<Platform, InputError> {
    if name.contains('\n') {
        platform::parse(name, "<platform>")
    } else if name.ends_with(".toml") {
        platform::load_file(Path::new(name))
    } else if platform::is_plat_info(name) {
        platform::load_plat_info(Path::new(name))
    } else {
        platform::load_builtin(name)
    }
}

/// The kernel preset with the overrides applied.
pub fn features(kernel: Kernel, sets: &[String], feats: &[String]) -> Result<Features, InputError> {
    let mut f = Features::preset(kernel);
    for s in sets {
        f.set(s)?;
    }
    for s in feats {
        f.set_feature(s)?;
    }
    Ok(f)
}

/// What a run simulates, each checked in turn: its workload, its platform and its
/// switches.
pub(super) fn inputs(spec: &RunSpec) -> Result<(Workload, Platform, Features), InputError> {
    let wl = load_workload(spec)?;
    let plat = load_platform(&spec.platform)?;
    Ok((wl, plat, features(spec.kernel, &spec.sets, &spec.features)?))
}

/// Load and check the workload.
pub fn load_workload(spec: &RunSpec) -> Result<Workload, InputError> {
    match &spec.workload {
        WorkloadSource::File(path) => workload::load(path, spec.dialect),
        WorkloadSource::Text { text, origin } => workload::parse(text, origin, spec.dialect),
    }
}

/// No output may replace an input (the workload, a platform file) or another output, and
/// the trace's format must be known.
pub(super) fn check_outputs(spec: &RunSpec) -> Result<(), InputError> {
    trace_output(spec)?;
    let mut inputs = Vec::new();
    if let WorkloadSource::File(path) = &spec.workload {
        inputs.push(("the workload", path.as_path()));
    }
    if spec.platform.ends_with(".toml") || platform::is_plat_info(&spec.platform) {
        inputs.push(("the platform", Path::new(&spec.platform)));
    }
    let info = spec.trace.as_deref().map(plat_info::path_for);
    let outputs: Vec<(&str, &Path)> = [
        ("the trace", spec.trace.as_deref()),
        ("the platform description", info.as_deref()),
        ("the schedstat", spec.schedstat.as_deref()),
        ("the log directory", spec.log_dir.as_deref()),
    ]
    .into_iter()
    .filter_map(|(name, path)| Some((name, path?)))
    .collect();
    match crate::output::clash(&inputs, &outputs) {
        Some((path, message)) => Err(InputError::new(path, message)),
        None => Ok(()),
    }
}

/// The trace's path and format: `trace_format`, else the path's extension.
pub(super) fn trace_output(spec: &RunSpec) -> Result<Option<(&PathBuf, TraceFormat)>, InputError> {
    let Some(path) = &spec.trace else {
        return Ok(None);
    };
    match spec.trace_format.or_else(|| TraceFormat::of_path(path)) {
        Some(f) => Ok(Some((path, f))),
        None => Err(InputError::option(
            "trace_format",
            format!(
                "unknown trace format for {}: name it .txt, .dat, .perfetto-trace or .pftrace, \
                 or choose txt, dat, dat6 or perfetto",
                path.display()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_platform_given_as_its_text_is_the_file() {
        let text = include_str!("../../../../platforms/hikey960.toml");
        let (by_text, by_name) = (
            super::load_platform(text).unwrap(),
            super::load_platform("hikey960").unwrap(),
        );
        assert_eq!(format!("{by_text:?}"), format!("{by_name:?}"));
        let err = super::load_platform("name = 3\n").unwrap_err().to_string();
        assert!(err.starts_with("<platform>:line 1: "), "{err}");
    }
}
