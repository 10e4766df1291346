"""Input files read whole, within the size every input fits (the core's MAX_INPUT_BYTES,
docs/outputs.md): a device such as /dev/zero, or a file of gigabytes, is refused at once
rather than read for ever."""

from pathlib import Path

from schedlab._core import MAX_INPUT_BYTES, InputError


def read_bytes(path, error=InputError) -> bytes:
    """`path`'s bytes, or `error` naming it."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_INPUT_BYTES + 1)
    except OSError as e:
        raise error(f"{path}: {e.strerror}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise error(f"{path}: larger than {MAX_INPUT_BYTES >> 20} MiB, the most schedlab reads from one input")
    return data


def read_text(path, error=InputError) -> str:
    """`path`'s text (UTF-8), or `error` naming it."""
    data = read_bytes(path, error)
    try:
        return data.decode()
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte {e.start} is 0x{data[e.start]:02x})") from None
