"""The terminal processes the command-line tests start."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator


@contextlib.contextmanager
def reaped(proc: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """The block's process, killed and reaped if the block leaves it running (an assertion
    failed before it was stopped), so that no terminal outlives its test."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
