"""Durations with units, as users write them: 20ms, 1.5s, 500us, 1048576ns."""

import re

from schedlab._core import InputError

UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s)\s*$")


def parse_duration(text: str) -> int:
    """A duration in integer nanoseconds; raises ValueError naming the accepted units."""
    m = _DURATION.match(str(text))
    if not m:
        raise ValueError(f"'{text}' is not a duration (a number followed by one of: {', '.join(UNITS_NS)})")
    number, unit = m.groups()
    ns = round(float(number) * UNITS_NS[unit])
    if ns != float(number) * UNITS_NS[unit]:
        raise ValueError(f"'{text}' is not a whole number of nanoseconds")
    return ns


def as_ns(value) -> int:
    """An int is taken as nanoseconds; a string is parsed with its unit."""
    if isinstance(value, int):
        return value
    return parse_duration(value)


def unsigned(option: str, value) -> int:
    """`value` as the core takes it (a u64), or InputError naming `option`: a negative or
    huge number is bad input, never an OverflowError."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise InputError(f"{option}: {value!r} is not an integer in 0..{(1 << 64) - 1}")
    return value
