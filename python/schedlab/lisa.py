"""A run's trace as LISA reads it (`pip install 'schedlab[lisa]'`: lisa-linux 3.1.0 with the
pins it needs): `RunResult.to_lisa()` gives a `lisa.trace.Trace` over the run's trace.dat
or text trace, with the platform description written beside it."""

from __future__ import annotations

import warnings
from pathlib import Path


class LisaMissing(ImportError):
    """LISA is not installed."""


class TextTraceWarning(UserWarning):
    """LISA reads less of a text trace than of a trace.dat."""


def _lisa():
    try:
        import lisa.trace
        from lisa.platforms.platinfo import PlatformInfo
    except ImportError as e:
        raise LisaMissing(f"LISA is not installed ({e}): pip install 'schedlab[lisa]'") from None
    return lisa.trace, PlatformInfo


def plat_info_path(trace: Path) -> Path:
    """Where a run writes the platform description of trace `NAME.EXT`: `NAME.plat_info.yml`."""
    return trace.with_name(f"{trace.stem}.plat_info.yml")


def trace(path) -> "lisa.trace.Trace":
    """LISA's view of a schedlab trace (.dat, or .txt), timestamps as recorded. LISA's text
    parser cannot find `print`'s `ip` in human-readable text (its KeyError 'ip' on
    `trace-cmd report` output as well as on schedlab's): for a text trace it is given the
    parser it uses for `print` in trace.dat reports."""
    lt, PlatformInfo = _lisa()
    path = Path(path)
    if path.suffix not in (".dat", ".txt"):
        raise ValueError(f"{path}: LISA reads a trace.dat or a text trace, not {path.suffix or 'this'}")
    plat = PlatformInfo.from_yaml_map(str(plat_info_path(path)))
    parser = None
    if path.suffix == ".txt":
        warnings.warn(f"{path}: LISA's text parser reads sched_switch's prev_state letters as no task "
                      "state it knows: preemptions are lost (df_latency_preemption comes out empty); a "
                      "trace.dat (trace='run.dat') has them", TextTraceWarning, stacklevel=3)
        printer = lt.PrintTxtEventParser(event="print", func_field="ip", content_field="buf")
        parser = lt.HRTxtTraceParser.from_txt_file(event_parsers=[printer])
    return lt.Trace(str(path), plat_info=plat, parser=parser, normalize_time=False)
