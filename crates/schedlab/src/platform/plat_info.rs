//! LISA's description of a target (`plat_info.yml`, as `PlatformInfo.to_yaml_map` and
//! schedlab beside its traces write it) as a platform: its CPU count, frequency domains,
//! each CPU's frequencies and capacity. It has no energy model, idle states or costs the
//! platform files give: the platform has none (no energy figures, no EAS) and the default
//! costs, unless it names a built-in platform whose CPUs, capacities and frequencies are
//! its own, which it then is. Simplified: `nrg-model` is not read.

use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

use super::{load_builtin, parse, Platform};
use crate::error::InputError;
use crate::limits::read_input;

/// Whether platform name `name` is a plat_info file.
pub fn is_plat_info(name: &str) -> bool {
    name.ends_with(".yml") || name.ends_with(".yaml")
}

/// The platform that the plat_info file at `path` describes.
pub fn load(path: &Path) -> Result<Platform, InputError> {
    let origin = path.display().to_string();
    let bad = |what: String| InputError::new(&origin, what);
    let text = String::from_utf8(read_input(path)?).map_err(|_| bad("not UTF-8 text".into()))?;
    let docs = YamlLoader::load_from_str(&text).map_err(|e| bad(e.to_string()))?;
    let top = docs.first().ok_or_else(|| bad("empty".into()))?;
    let info = &top["platform-info"];
    let conf = if info["conf"].is_badvalue() {
        top
    } else {
        &info["conf"]
    };
    let toml = platform_toml(conf, path).map_err(bad)?;
    let described = parse(&toml, &origin)?;
    Ok(builtin_twin(&described).unwrap_or(described))
}

/// The built-in platform of the description's name, if its CPUs, capacities and frequencies
/// are the description's (a plat_info that schedlab wrote beside a run's trace, or LISA's of
/// that board): it has what a plat_info cannot say.
fn builtin_twin(described: &Platform) -> Option<Platform> {
    let builtin = load_builtin(&described.name).ok()?;
    let shape = |p: &Platform| {
        let caps: Vec<u32> = p.cpus.iter().map(|c| c.capacity_orig).collect();
        let doms: Vec<(Vec<usize>, Vec<u32>)> = (p.freq_domains.iter())
            .map(|d| (d.cpus.clone(), d.opps.iter().map(|o| o.khz).collect()))
            .collect();
        (caps, doms)
    };
    (shape(&builtin) == shape(described)).then_some(builtin)
}

/// `conf`'s keys as a platform file's TOML.
fn platform_toml(conf: &Yaml, path: &Path) -> Result<String, String> {
    let count =
        conf["cpus-count"].as_i64().filter(|&n| n > 0).ok_or(
            "cpus-count: missing, or not a positive integer (is this LISA's plat_info.yml?)",
        )? as usize;
    let cpu = |y: &Yaml| y.as_i64().filter(|&c| (0..count as i64).contains(&c));
    let domains: Vec<Vec<usize>> = match conf["freq-domains"].as_vec() {
        Some(ds) => (ds.iter())
            .map(|d| {
                let cpus = d.as_vec().ok_or("freq-domains: a list of lists of CPUs")?;
                (cpus.iter())
                    .map(|c| cpu(c).map(|c| c as usize))
                    .collect::<Option<Vec<usize>>>()
                    .ok_or_else(|| format!("freq-domains: a CPU outside 0..{count}"))
            })
            .collect::<Result<_, String>>()?,
        None => vec![(0..count).collect()],
    };
    let capacity = |c: usize| -> Result<i64, String> {
        let y = &conf["cpu-capacities"]["orig"][c];
        if y.is_badvalue() {
            return Ok(1024);
        }
        y.as_i64()
            .filter(|v| (1..=1024).contains(v))
            .ok_or_else(|| format!("cpu-capacities.orig.{c}: not a capacity from 1 to 1024"))
    };
    let mut doms = toml::value::Array::new();
    for (i, cpus) in domains.iter().enumerate() {
        let first = *cpus.first().ok_or("freq-domains: an empty domain")?;
        let cap = capacity(first)?;
        if let Some(&c) = cpus.iter().find(|&&c| capacity(c) != Ok(cap)) {
            return Err(format!(
                "cpu-capacities: CPUs {first} and {c} of one frequency domain differ"
            ));
        }
        let khz: Vec<i64> = match conf["freqs"][first].as_vec() {
            Some(fs) => (fs.iter().map(Yaml::as_i64))
                .collect::<Option<_>>()
                .ok_or_else(|| format!("freqs.{first}: not a list of kHz"))?,
            None => vec![1_000_000],
        };
        let mut d = toml::Table::new();
        d.insert("name".into(), format!("pd{i}").into());
        let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
        d.insert("cpus".into(), list.join(",").into());
        d.insert("capacity".into(), cap.into());
        let opps = khz.iter().map(|&k| {
            let mut o = toml::Table::new();
            o.insert("khz".into(), k.into());
            toml::Value::Table(o)
        });
        d.insert("opps".into(), toml::Value::Array(opps.collect()));
        doms.push(toml::Value::Table(d));
    }
    let mut t = toml::Table::new();
    let name = conf["name"].as_str().map_or_else(
        || {
            path.file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        },
        str::to_string,
    );
    t.insert("name".into(), name.into());
    let about = format!(
        "from {} (LISA's plat_info: no energy model)",
        path.display()
    );
    t.insert("description".into(), about.into());
    t.insert("freq_domain".into(), toml::Value::Array(doms));
    toml::to_string(&t).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;
    use crate::platform::load_builtin;

    fn load_text(text: &str) -> Result<Platform, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plat_info.yml");
        std::fs::write(&path, text).unwrap();
        load(&path).map_err(|e| e.to_string())
    }

    /// hikey960 as schedlab describes it beside a trace reads back with its CPUs'
    /// capacities, frequency domains and frequencies; under another name, with no energy
    /// model; under its own, it is the built-in hikey960, energy model included.
    #[test]
    fn schedlab_s_own_description_reads_back() {
        let hikey = load_builtin("hikey960").unwrap();
        let text = crate::trace::plat_info::render(&hikey, Kernel::V6_12, 100);
        assert!(load_text(&text).unwrap().has_energy_model());
        let p = load_text(&text.replace("\"hikey960\"", "\"my-board\"")).unwrap();
        let caps = |p: &Platform| p.cpus.iter().map(|c| c.capacity_orig).collect::<Vec<_>>();
        assert_eq!(caps(&p), caps(&hikey));
        let doms = |p: &Platform| {
            (p.freq_domains.iter())
                .map(|d| {
                    (
                        d.cpus.clone(),
                        d.opps.iter().map(|o| o.khz).collect::<Vec<_>>(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(doms(&p), doms(&hikey));
        assert_eq!(p.name, "my-board");
        assert!(!p.has_energy_model());
    }

    /// LISA's own layout, without freqs or capacities: one 1 GHz OPP, capacity 1024.
    #[test]
    fn what_a_plat_info_leaves_out_is_the_defaults() {
        let p =
            load_text("platform-info:\n  conf:\n    cpus-count: 2\n    freq-domains: [[0], [1]]\n")
                .unwrap();
        assert_eq!(p.cpus.len(), 2);
        assert!(p.cpus.iter().all(|c| c.capacity_orig == 1024));
        assert_eq!(p.freq_domains[1].opps.len(), 1);
    }

    #[test]
    fn a_bad_description_is_refused_naming_the_key() {
        let err = |text: &str| load_text(text).unwrap_err();
        assert!(err("name: x\n").ends_with(
            "cpus-count: missing, or not a positive integer (is this LISA's plat_info.yml?)"
        ));
        let two =
            "cpus-count: 2\nfreq-domains: [[0, 1]]\ncpu-capacities: {orig: {0: 512, 1: 1024}}\n";
        assert!(err(two).ends_with("cpu-capacities: CPUs 0 and 1 of one frequency domain differ"));
        assert!(err("cpus-count: 1\nfreq-domains: [[3]]\n")
            .ends_with("freq-domains: a CPU outside 0..1"));
        assert!(err("cpus-count: 1\nfreqs: {0: [fast]}\n").ends_with("freqs.0: not a list of kHz"));
        assert!(err("cpus-count: [\n").contains("plat_info.yml: "));
    }
}
