"""`schedlab compare --explain` and `Comparison.explain()`: why two runs of one workload
diverge. The core runs both in lock-step and stops at the first scheduling decisions they
take differently (where a waking task goes, what a CPU picks, whether a wakeup preempts,
what a balance pass pulls, which frequency a policy takes), each with the values the kernel
functions weighed for it and the decisions around it (docs/analysis.md)."""

from __future__ import annotations

from dataclasses import dataclass

from schedlab import _core
from schedlab.run import RunSpec

LABELS = ("a", "b")


@dataclass(frozen=True)
class Decision:
    """One decision: when (`at_ns`, from the run's start), its kind (the kernel function that
    makes it), on which CPU, about which task (`comm-pid`), what it decided and by which
    rule, and `why`: (function, about, {value name: value}) per note."""

    at_ns: int
    kind: str
    cpu: int
    task: str | None
    outcome: str
    how: str
    why: tuple

    @classmethod
    def of(cls, d: dict) -> "Decision":
        why = tuple((func, about, dict(values)) for func, about, values in d["why"])
        return cls(d["at_ns"], d["kind"], d["cpu"], d["task"], d["outcome"], d["how"], why)

    def line(self) -> str:
        """One line, as a trace shows an event: time, CPU, what and its outcome."""
        about = f" {self.task}" if self.task else ""
        how = f" ({self.how})" if self.how else ""
        return f"{self.at_ns / 1e9:.9f} [{self.cpu:03d}] {self.kind}:{about} -> {self.outcome}{how}"


@dataclass(frozen=True)
class Divergence:
    """A decision the runs took differently: `sides` (a's and b's; None where that run never
    made it), `ordinal` (its place among its subject's decisions: 0 the first), and the
    decisions `before` and `after` it in each run."""

    ordinal: int
    sides: tuple
    before: tuple
    after: tuple

    @classmethod
    def of(cls, d: dict) -> "Divergence":
        def shown(side):
            return None if side is None else Decision.of(side)

        return cls(d["ordinal"], tuple(shown(s) for s in d["sides"]),
                   tuple(tuple(map(Decision.of, v)) for v in d["before"]),
                   tuple(tuple(map(Decision.of, v)) for v in d["after"]))

    def text(self, labels: tuple[str, str] = LABELS) -> str:
        first = next(s for s in self.sides if s is not None)
        subject = first.task if first.kind in ("select_task_rq", "detach_tasks") else f"CPU {first.cpu}"
        lines = [f"{first.kind} of {subject}, its {_nth(self.ordinal + 1)}:"]
        for label, side in zip(labels, self.sides):
            if side is None:
                lines.append(f"  {label}: never made (the run ended first)")
                continue
            how = f" by {side.how}" if side.how else ""
            lines.append(f"  {label}: at {side.at_ns / 1e9:.9f} s on CPU {side.cpu}: {side.outcome}{how}")
            lines += [f"      {_note(n)}" for n in side.why]
        if self.before[0] == self.before[1]:
            lines += _context("before (both runs)", self.before[0])
        else:
            for label, before in zip(labels, self.before):
                lines += _context(f"before ({label})", before)
        for label, after in zip(labels, self.after):
            lines += _context(f"after ({label})", after)
        return "\n".join(lines)


@dataclass(frozen=True)
class Explanation:
    """What the lock-step found: the `divergences` (at most the number asked), the
    decisions `compared`, and each run's simulated time when it stopped."""

    divergences: tuple
    compared: int
    simulated_ns: tuple
    labels: tuple[str, str] = LABELS

    def text(self) -> str:
        if not self.divergences:
            return (f"No divergence: the runs took the same {self.compared} decisions "
                    f"({self.simulated_ns[0] / 1e9:.3f} s simulated).\n")
        parts = [f"Divergence {i + 1}: {d.text(self.labels)}" for i, d in enumerate(self.divergences)]
        return "\n\n".join(parts) + f"\n\n({self.compared} decisions compared; stopped at " + \
            " and ".join(f"{ns / 1e9:.6f} s ({label})" for label, ns in zip(self.labels, self.simulated_ns)) + ")\n"

    def __str__(self) -> str:
        return self.text()


def explain(a: RunSpec, b: RunSpec, n: int = 1, labels: tuple[str, str] = LABELS,
            progress=None) -> Explanation:
    """Run `a` and `b` in lock-step until `n` of their decisions have differed (or both
    ended). The first divergence is exact: the runs decided alike until then; later ones may
    follow from it."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise _core.InputError(f"--explain: {n!r} is not a number of divergences (1 or more)")
    r = _core.explain(a.core_args(), b.core_args(), n, progress or (lambda now, total: None))
    return Explanation(tuple(map(Divergence.of, r["divergences"])), r["compared"], tuple(r["simulated_ns"]),
                       tuple(labels))


def _note(note) -> str:
    func, about, values = note
    where = f" {about}" if about else ""
    return f"{func}{where}: " + " ".join(f"{k}={v}" for k, v in values.items())


def _context(heading: str, decisions) -> list[str]:
    return [f"  {heading}:"] + [f"      {d.line()}" for d in decisions] if decisions else []


def _nth(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"
