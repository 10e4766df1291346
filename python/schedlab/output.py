"""Output files written whole or not at all."""

import os
from pathlib import Path


class Staged:
    """An output file written whole or not at all: checked writable before the run (a
    temporary file beside it), renamed over it by `commit`; `discard` removes what is left."""

    def __init__(self, path: str):
        target = Path(path)
        if target.is_dir():
            raise OSError(f"{path}: is a directory")
        # Created as open(2) creates any output (0666 less the umask), then renamed.
        self.tmp = target.with_name(f".{target.name}.schedlab-{os.getpid()}.tmp")
        try:
            os.close(os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666))
        except OSError as e:
            raise OSError(f"{path}: cannot write: {e.strerror}") from None
        self.path = path

    def commit(self, text: str) -> None:
        with open(self.tmp, "w") as f:
            f.write(text)
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        """Remove the temporary file, unless `commit` moved it into place."""
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
