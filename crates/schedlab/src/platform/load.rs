//! Reading platform descriptions: the TOML schema, its checks, and the built-in files.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::cache::CacheFile;
use super::{parse_cpulist, Cpu, FreqDomain, IdleState, OpCosts, Opp, Platform, QEMU_HOST_RANGE};
use crate::error::InputError;
use crate::limits::{MAX_POWER_MW, NR_CPUS};

/// The platforms shipped in `platforms/`, by name.
const BUILTIN: [(&str, &str); 6] = [
    ("hikey", include_str!("../../../../platforms/hikey.toml")),
    (
        "hikey960",
        include_str!("../../../../platforms/hikey960.toml"),
    ),
    (
        "juno-r2",
        include_str!("../../../../platforms/juno-r2.toml"),
    ),
    ("pixel6", include_str!("../../../../platforms/pixel6.toml")),
    (
        "icelake-2s",
        include_str!("../../../../platforms/icelake-2s.toml"),
    ),
    (
        "icelake-1s",
        include_str!("../../../../platforms/icelake-1s.toml"),
    ),
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlatformFile {
    name: String,
    description: String,
    /// CPU n and CPU n + stride are hardware threads of one core.
    smt_sibling_stride: Option<usize>,
    freq_domain: Vec<DomainFile>,
    #[serde(default)]
    overhead: OverheadFile,
    cache: Option<CacheFile>,
    /// The spread of a timer interrupt's lateness, ns (0, the default: on the expiry).
    #[serde(default)]
    irq_jitter_ns: u64,
    /// How far apart the CPUs take the interrupts of one expiry, ns (0, the default).
    #[serde(default)]
    irq_skew_ns: u64,
    /// How long an idle CPU takes to get going, ns: one figure, or quantiles of its
    /// distribution (none, the default).
    #[serde(default)]
    halt_exit_ns: OneOrMore,
    /// How long a running CPU takes a sleeper's timer interrupt, ns: one figure, or
    /// quantiles (none, the default).
    #[serde(default)]
    irq_entry_ns: OneOrMore,
    /// Quantiles of a job's `run` time over its calibration, 1/1000 (none, the default).
    #[serde(default)]
    work_stretch: Vec<u64>,
    /// Quantiles of a newly idle balance pass's time beyond its counted work, ns (none, the
    /// default).
    #[serde(default)]
    newidle_stall_ns: Vec<u64>,
    /// Quantiles of each CPU's newly idle cost when the workload starts, ns (none, the
    /// default).
    #[serde(default)]
    start_newidle_cost_ns: Vec<u64>,
}

/// The cost model's table: a scale of the defaults, and ns per operation (`NAME_ns = N`).
#[derive(Deserialize, Default)]
struct OverheadFile {
    scale: Option<f64>,
    #[serde(flatten)]
    ops: BTreeMap<String, u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainFile {
    name: String,
    cpus: String,
    capacity: u32,
    /// Cluster cpulists; by default the domain is one cluster.
    clusters: Option<Vec<String>>,
    /// One frequency domain per CPU, each with these OPPs (x86 HWP).
    #[serde(default)]
    per_cpu: bool,
    #[serde(default)]
    llc: LlcScope,
    #[serde(default)]
    package: usize,
    #[serde(default)]
    numa: usize,
    opps: Vec<OppFile>,
    #[serde(default)]
    idle: Vec<IdleFile>,
    /// `cpuinfo.transition_latency` (DT `clock-latency-ns`); 0 when unknown.
    #[serde(default)]
    transition_latency_ns: u64,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum LlcScope {
    #[default]
    Cluster,
    Package,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OppFile {
    khz: u32,
    power: Option<f64>,
    cluster_power: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdleFile {
    name: String,
    exit_latency_us: u64,
    min_residency_us: u64,
    power: Option<f64>,
    cluster_power: Option<f64>,
}

/// Names accepted by [`load_builtin`], `smp:N` and `qemu-tcg:N` aside.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(n, _)| *n)
}

/// A built-in platform, `smp:N`, `qemu-tcg:N` or `qemu-tcg:N@K` (N ≥ 2: its host's
/// speed, [`Platform::qemu_tcg`]).
pub fn load_builtin(name: &str) -> Result<Platform, InputError> {
    if let Some(n) = name.strip_prefix("smp:") {
        return Ok(Platform::smp(cpus(name, "smp", n)?));
    }
    if let Some(rest) = name.strip_prefix("qemu-tcg:") {
        let (n, host) = rest.split_once('@').unwrap_or((rest, "1"));
        let n = cpus(name, "qemu-tcg", n)?;
        let host = match host.parse::<f64>() {
            Ok(k) if QEMU_HOST_RANGE.contains(&k) && (n > 1 || k == 1.0) => k,
            _ => {
                return Err(InputError::option(
                    "platform",
                    format!(
                        "{name:?}: qemu-tcg:N@K needs N of 2 or more (one vCPU runs under \
                         icount, in guest time) and K from {} to {}",
                        QEMU_HOST_RANGE.start(),
                        QEMU_HOST_RANGE.end()
                    ),
                ))
            }
        };
        return Ok(Platform::qemu_tcg(n, host));
    }
    match BUILTIN.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => parse(text, &format!("platforms/{n}.toml")),
        None => Err(InputError::option(
            "platform",
            format!(
                "unknown platform {name:?}; known: {}, smp:N, qemu-tcg:N, or a .toml file",
                builtin_names().collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// N of `FAMILY:N`, between 1 and NR_CPUS.
fn cpus(name: &str, family: &str, n: &str) -> Result<usize, InputError> {
    match n.parse::<usize>() {
        Ok(n) if (1..=NR_CPUS).contains(&n) => Ok(n),
        _ => Err(InputError::option(
            "platform",
            format!("{name:?}: {family}:N needs N between 1 and {NR_CPUS}"),
        )),
    }
}

/// A platform from a TOML file.
pub fn load_file(path: &std::path::Path) -> Result<Platform, InputError> {
    let where_ = path.display().to_string();
    let text = String::from_utf8(crate::limits::read_input(path)?)
        .map_err(|e| InputError::new(&where_, format!("not UTF-8 text: {e}")))?;
    parse(&text, &where_)
}

/// Parse and check a platform description; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Platform, InputError> {
    let file: PlatformFile = toml::from_str(text).map_err(|e| {
        let msg = e.message().to_string();
        match e.span() {
            Some(span) => InputError::new(format!("{origin}:{}", line_of(text, span.start)), msg),
            None => InputError::new(origin, msg),
        }
    })?;
    build(file).map_err(|m| InputError::new(origin, m))
}

fn line_of(text: &str, offset: usize) -> String {
    format!(
        "line {}",
        text[..offset.min(text.len())].matches('\n').count() + 1
    )
}

fn build(file: PlatformFile) -> Result<Platform, String> {
    let mut cpus: Vec<Option<Cpu>> = Vec::new();
    let mut domains = Vec::new();
    let mut cluster_id = 0;
    for (d, dom) in file.freq_domain.iter().enumerate() {
        let at = format!("freq_domain[{d}] ({})", dom.name);
        check_domain(dom).map_err(|m| format!("{at}: {m}"))?;
        let members = parse_cpulist(&dom.cpus).map_err(|m| format!("{at}.cpus: {m}"))?;
        let clusters = match &dom.clusters {
            Some(list) => list
                .iter()
                .map(|c| parse_cpulist(c))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|m| format!("{at}.clusters: {m}"))?,
            None => vec![members.clone()],
        };
        let mut covered: Vec<usize> = clusters.concat();
        covered.sort_unstable();
        if covered != members {
            return Err(format!(
                "{at}.clusters: the clusters must partition the domain's CPUs"
            ));
        }
        let groups: Vec<Vec<usize>> = if dom.per_cpu {
            members.iter().map(|&c| vec![c]).collect()
        } else {
            vec![members.clone()]
        };
        for (g, group) in groups.iter().enumerate() {
            let fd = domains.len();
            domains.push(domain(
                dom,
                group,
                if dom.per_cpu {
                    format!("{}.{g}", dom.name)
                } else {
                    dom.name.clone()
                },
            ));
            for &id in group {
                if cpus.len() <= id {
                    cpus.resize(id + 1, None);
                }
                if cpus[id].is_some() {
                    return Err(format!("{at}: CPU {id} is in two frequency domains"));
                }
                let cluster =
                    cluster_id + clusters.iter().position(|c| c.contains(&id)).unwrap_or(0);
                let llc = match dom.llc {
                    LlcScope::Cluster => cluster,
                    LlcScope::Package => dom.package,
                };
                let core = file.smt_sibling_stride.map_or(id, |s| id % s);
                cpus[id] = Some(Cpu {
                    id,
                    capacity_orig: dom.capacity,
                    freq_domain: fd,
                    core,
                    cluster,
                    llc,
                    package: dom.package,
                    numa: dom.numa,
                });
            }
        }
        cluster_id += clusters.len();
    }
    let cpus: Vec<Cpu> = cpus
        .into_iter()
        .enumerate()
        .map(|(id, c)| {
            c.ok_or_else(|| format!("CPU {id} is in no frequency domain (CPU ids must be 0..N-1)"))
        })
        .collect::<Result<_, _>>()?;
    if cpus.is_empty() {
        return Err("a platform needs at least one CPU".into());
    }
    if cpus.iter().all(|c| c.capacity_orig != 1024) {
        return Err("the biggest CPU must have capacity 1024 (the kernel normalises to it)".into());
    }
    Ok(Platform {
        name: file.name,
        description: file.description,
        cpus,
        freq_domains: domains,
        costs: OpCosts::with(file.overhead.scale.unwrap_or(1.0), &file.overhead.ops)?,
        kernel_costs: vec![],
        cache: file.cache.as_ref().map(CacheFile::spec).transpose()?,
        irq_jitter_ns: timing("irq_jitter_ns", file.irq_jitter_ns)?,
        irq_skew_ns: timing("irq_skew_ns", file.irq_skew_ns)?,
        halt_exit_ns: timings("halt_exit_ns", file.halt_exit_ns)?,
        irq_entry_ns: timings("irq_entry_ns", file.irq_entry_ns)?,
        work_stretch: work_stretch(file.work_stretch)?,
        newidle_stall_ns: newidle_cost("newidle_stall_ns", file.newidle_stall_ns)?,
        start_newidle_cost_ns: newidle_cost("start_newidle_cost_ns", file.start_newidle_cost_ns)?,
        kernel_start_newidle_cost_ns: vec![],
        kthreads: vec![],
        kthreads_from: &[],
    })
}

/// A figure, or quantiles of its distribution.
#[derive(Deserialize, Default)]
#[serde(untagged)]
enum OneOrMore {
    #[default]
    None,
    One(u64),
    More(Vec<u64>),
}

/// A platform's `halt_exit_ns` or `irq_entry_ns` (`key`): quantiles, each at most
/// `MAX_TIMING_NS` (0 or none: no time).
fn timings(key: &str, v: OneOrMore) -> Result<Vec<u64>, String> {
    let q = match v {
        OneOrMore::None | OneOrMore::One(0) => vec![],
        OneOrMore::One(ns) => vec![ns],
        OneOrMore::More(q) => q,
    };
    quantiles(key, q, |ns| timing(key, ns).map(drop))
}

/// A platform's `work_stretch` quantiles (or a schbench generator's), each in
/// `WORK_STRETCH_RANGE`.
pub(crate) fn work_stretch(q: Vec<u64>) -> Result<Vec<u64>, String> {
    let r = super::WORK_STRETCH_RANGE;
    quantiles("work_stretch", q, |v| match r.contains(&v) {
        true => Ok(()),
        false => Err(format!(
            "work_stretch: {v} out of range, {} to {} (1/1000 of the calibration)",
            r.start(),
            r.end()
        )),
    })
}

/// A distribution's quantiles under `key`: each passes `check`, they ascend, at most 100.
fn quantiles(
    key: &str,
    q: Vec<u64>,
    check: impl Fn(u64) -> Result<(), String>,
) -> Result<Vec<u64>, String> {
    q.iter().try_for_each(|&v| check(v))?;
    if q.windows(2).any(|w| w[0] > w[1]) {
        return Err(format!("{key}: the quantiles must ascend"));
    }
    if q.len() > 100 {
        return Err(format!("{key}: {} quantiles, at most 100", q.len()));
    }
    Ok(q)
}

/// A platform's quantiles `key` of a newly idle pass's time, each at most `MAX_OP_COST_NS`
/// (100 ms).
fn newidle_cost(key: &str, q: Vec<u64>) -> Result<Vec<u64>, String> {
    let max = super::costs::MAX_OP_COST_NS;
    quantiles(key, q, |ns| match ns <= max {
        true => Ok(()),
        false => Err(format!("{key} = {ns}: at most {max} (100 ms)")),
    })
}

/// A platform's timing figure `key` (ns), at most `MAX_TIMING_NS`.
fn timing(key: &str, ns: u64) -> Result<u64, String> {
    if ns > super::MAX_TIMING_NS {
        return Err(format!(
            "{key} = {ns}: at most {} (1 ms)",
            super::MAX_TIMING_NS
        ));
    }
    Ok(ns)
}

fn check_domain(dom: &DomainFile) -> Result<(), String> {
    if !(1..=1024).contains(&dom.capacity) {
        return Err(format!("capacity {} is outside 1..1024", dom.capacity));
    }
    if dom.opps.is_empty() {
        return Err("opps: at least one OPP is needed".into());
    }
    if dom.opps.windows(2).any(|w| w[0].khz >= w[1].khz) || dom.opps[0].khz == 0 {
        return Err("opps: frequencies must be positive and strictly increasing".into());
    }
    if dom
        .opps
        .iter()
        .any(|o| o.power.is_some_and(|p| !(p > 0.0 && p <= MAX_POWER_MW)))
    {
        return Err(format!(
            "opps: an OPP's power must be above 0 and at most {MAX_POWER_MW} (mW)"
        ));
    }
    if dom
        .opps
        .iter()
        .any(|o| o.power.is_some() != dom.opps[0].power.is_some())
    {
        return Err("opps: give power for every OPP or for none".into());
    }
    let rest = dom
        .opps
        .iter()
        .map(|o| o.cluster_power)
        .chain(dom.idle.iter().flat_map(|s| [s.power, s.cluster_power]))
        .flatten();
    if rest.into_iter().any(|p| !(0.0..=MAX_POWER_MW).contains(&p)) {
        return Err(format!(
            "cluster and idle power must be from 0 to {MAX_POWER_MW} (mW)"
        ));
    }
    Ok(())
}

fn domain(dom: &DomainFile, cpus: &[usize], name: String) -> FreqDomain {
    FreqDomain {
        name,
        cpus: cpus.to_vec(),
        opps: dom
            .opps
            .iter()
            .map(|o| Opp {
                khz: o.khz,
                power_mw: o.power,
                cluster_power_mw: o.cluster_power,
            })
            .collect(),
        idle_states: dom
            .idle
            .iter()
            .map(|s| IdleState {
                name: s.name.clone(),
                exit_latency: s.exit_latency_us * 1000,
                min_residency: s.min_residency_us * 1000,
                power_mw: s.power,
                cluster_power_mw: s.cluster_power,
            })
            .collect(),
        transition_latency: dom.transition_latency_ns,
    }
}
