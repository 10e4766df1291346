"""Output files written whole or not at all, as the core writes its own (crates/schedlab/
src/output.rs): a symbolic link is followed (its target gets the output, the link stays), a
device or a FIFO is written in place, and no output may replace an input or another output."""

import os
from pathlib import Path

from schedlab import _core


class Staged:
    """An output file written whole or not at all: checked writable before the run (a
    temporary file beside it), renamed over it by `commit`; `discard` removes what is left.
    A device or a FIFO is written in place when committed."""

    def __init__(self, path):
        target = Path(os.path.realpath(path))
        if target.is_dir():
            raise OSError(f"{path}: is a directory")
        self.path = target
        self.tmp = None
        if target.exists() and not target.is_file():
            if not os.access(target, os.W_OK):
                raise OSError(f"{path}: cannot write: Permission denied")
            return
        # Created as open(2) creates any output (0666 less the umask), then renamed.
        self.tmp = target.with_name(f".{target.name}.schedlab-{os.getpid()}.tmp")
        try:
            os.close(os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666))
        except OSError as e:
            raise OSError(f"{path}: cannot write: {e.strerror}") from None

    def write(self, writer) -> None:
        """`writer(path)` writes the output at the path it is given; then it is in place."""
        try:
            writer(self.tmp or self.path)
            if self.tmp is not None:
                os.replace(self.tmp, self.path)
        except OSError as e:
            raise OSError(e.errno, e.strerror, str(self.path)) from None

    def commit(self, text: str) -> None:
        self.write(lambda path: Path(path).write_text(text))

    def discard(self) -> None:
        """Remove the temporary file, unless `commit` moved it into place."""
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except FileNotFoundError:
                pass


def write_text(path, text: str) -> None:
    """Write `text` to `path` whole or not at all."""
    out = Staged(path)
    try:
        out.commit(text)
    finally:
        out.discard()


def check_outputs(inputs: dict, outputs: dict) -> None:
    """InputError when an output (name → path, or None) would replace an input or another
    output: the core's rule (`output::clash`)."""
    pairs = [[(name, str(path)) for name, path in side.items() if path is not None] for side in (inputs, outputs)]
    found = _core.output_clash(*pairs)
    if found is not None:
        raise _core.InputError(f"{found[0]}: {found[1]}")
