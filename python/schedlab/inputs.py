"""Input files read whole, by the core's reader (`limits::read_input`): within the size every
input fits (64 MiB, docs/outputs.md), so that a device such as /dev/zero, or a file of
gigabytes, is refused at once rather than read for ever."""

from schedlab._core import InputError, read_input


def read_bytes(path, error=InputError) -> bytes:
    """`path`'s bytes, or `error` naming it."""
    try:
        return read_input(str(path))
    except InputError as e:
        raise error(str(e)) from None


def read_text(path, error=InputError) -> str:
    """`path`'s text (UTF-8), or `error` naming it."""
    data = read_bytes(path, error)
    try:
        return data.decode()
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte {e.start} is 0x{data[e.start]:02x})") from None
