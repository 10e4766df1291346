//! A platform's caches as the cache-affinity model sees them (`[cache]` in a platform
//! file): the level private to a core (or shared by a cluster), the last-level cache of an
//! LLC domain, and what refilling a KiB costs from the LLC, local memory and another node.

use serde::Deserialize;

/// Which CPUs share the private level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A core's hardware threads (L2 per core, as Intel's).
    Core,
    /// A cluster (L2 per cluster, as Arm's big.LITTLE clusters).
    Cluster,
}

/// The cache-affinity model's platform figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSpec {
    pub private_bytes: u64,
    pub private_scope: Scope,
    /// The LLC domain's shared cache, if it has one beyond the private level.
    pub llc_bytes: Option<u64>,
    /// Cost of refilling 1 KiB from the LLC, local memory, another node's memory or caches.
    pub llc_ns_per_kib: u64,
    pub memory_ns_per_kib: u64,
    pub remote_ns_per_kib: u64,
    /// The share of a working set left in a cache halves each time this passes (None: the
    /// model's default).
    pub half_life_ns: Option<u64>,
}

/// `[cache]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CacheFile {
    private: String,
    private_shared_by: Option<String>,
    llc: Option<String>,
    llc_ns_per_kib: Option<u64>,
    memory_ns_per_kib: u64,
    remote_ns_per_kib: Option<u64>,
    half_life_ns: Option<u64>,
}

/// The largest cache size accepted: 4 GiB.
const MAX_CACHE_BYTES: u64 = 4 << 30;
/// The largest refill cost accepted: 1 ms per KiB.
const MAX_NS_PER_KIB: u64 = 1_000_000;

impl CacheFile {
    pub(super) fn spec(&self) -> Result<CacheSpec, String> {
        let scope = match self.private_shared_by.as_deref() {
            None | Some("core") => Scope::Core,
            Some("cluster") => Scope::Cluster,
            Some(s) => {
                return Err(format!(
                    "cache.private_shared_by = {s:?}: expected \"core\" or \"cluster\""
                ))
            }
        };
        let llc = self
            .llc
            .as_deref()
            .map(|s| size("cache.llc", s))
            .transpose()?;
        let rate = |key: &str, v: u64| match v {
            1..=MAX_NS_PER_KIB => Ok(v),
            _ => Err(format!(
                "cache.{key} = {v}: out of range, 1 to {MAX_NS_PER_KIB}"
            )),
        };
        let memory = rate("memory_ns_per_kib", self.memory_ns_per_kib)?;
        let llc_rate = match (llc, self.llc_ns_per_kib) {
            (Some(_), Some(v)) => rate("llc_ns_per_kib", v)?,
            (Some(_), None) => return Err("cache.llc needs llc_ns_per_kib".into()),
            (None, _) => memory,
        };
        if let Some(h) = self
            .half_life_ns
            .filter(|h| !(1..=1_000_000_000).contains(h))
        {
            return Err(format!(
                "cache.half_life_ns = {h}: out of range, 1 to 1000000000"
            ));
        }
        Ok(CacheSpec {
            private_bytes: size("cache.private", &self.private)?,
            private_scope: scope,
            llc_bytes: llc,
            llc_ns_per_kib: llc_rate,
            memory_ns_per_kib: memory,
            remote_ns_per_kib: rate(
                "remote_ns_per_kib",
                self.remote_ns_per_kib.unwrap_or(memory),
            )?,
            half_life_ns: self.half_life_ns,
        })
    }
}

/// A size as platform files write one: bytes, or a number with K, M or G (KiB, MiB, GiB;
/// "KiB", "MB" and the like are read the same).
pub fn size(key: &str, s: &str) -> Result<u64, String> {
    let bad = || {
        format!("{key} = {s:?}: not a size (bytes, or a number with K, M or G: \"48K\", \"1.25M\")")
    };
    let t = s.trim();
    let digits = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(bad()),
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    let bytes = (n * (1u64 << shift) as f64).round();
    if !(1.0..=MAX_CACHE_BYTES as f64).contains(&bytes) {
        return Err(format!("{key} = {s:?}: out of range, 1 byte to 4G"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(size("k", "48K"), Ok(48 * 1024));
        assert_eq!(size("k", "1.25M"), Ok(1280 * 1024));
        assert_eq!(size("k", "54 MiB"), Ok(54 << 20));
        assert_eq!(size("k", "4096"), Ok(4096));
        assert!(size("k", "big").unwrap_err().contains("not a size"));
        assert!(size("k", "12Q").is_err());
        assert!(size("k", "0").unwrap_err().contains("out of range"));
        assert!(size("k", "5G").is_err());
    }
}
