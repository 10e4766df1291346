"""`schedlab.run`: simulate an rt-app workload on a platform; results as DataFrames."""

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from schedlab import _core


@dataclass
class RunResult:
    """A finished run: per-task and per-CPU figures, warnings, and the switches in force."""

    platform: str
    kernel: str
    simulated_ns: int
    events: int
    tasks: pd.DataFrame
    cpus: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    deadlock: str | None = None
    switches: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict:
        """The run summary as plain data (what `--summary FILE.json` writes)."""
        return {
            "platform": self.platform,
            "kernel": self.kernel,
            "simulated_s": self.simulated_ns / 1e9,
            "events": self.events,
            "deadlock": self.deadlock,
            "switches": self.switches,
            "tasks": self.tasks.to_dict(orient="records"),
            "cpus": self.cpus.to_dict(orient="records"),
            "warnings": self.warnings,
        }


def run(workload, platform: str = "smp:4", *, kernel: str = "6.12", fair: str | None = None,
        sets=(), features=(), duration_ns: int | None = None, trace=None, log_dir=None,
        json_c: bool = False, progress=None) -> RunResult:
    """Run `workload` (an rt-app JSON file) on `platform` (a built-in name, smp:N or a .toml)."""
    sets = list(sets) + ([f"fair.policy={fair}"] if fair else [])
    r = _core.run(Path(workload), platform, kernel, sets, list(features), duration_ns,
                  None if trace is None else Path(trace), None if log_dir is None else Path(log_dir),
                  json_c, progress or (lambda now, total: None))
    tasks = pd.DataFrame(r["tasks"])
    tasks["utilization"] = tasks["run_ns"] / max(r["simulated_ns"], 1)
    cpus = pd.DataFrame({k: v for k, v in r["cpus"].items() if k != "freq_residency"})
    cpus["busy_pct"] = 100.0 * cpus["busy_ns"] / max(r["simulated_ns"], 1)
    cpus["freq_residency"] = [{str(khz): ns for khz, ns in fr} for fr in r["cpus"]["freq_residency"]]
    return RunResult(r["platform"], r["kernel"], r["simulated_ns"], r["events"], tasks, cpus,
                     r["warnings"], r["deadlock"], dict(r["switches"]))
