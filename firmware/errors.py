"""The root of the product's error hierarchy, as the terminal's layers import it.

Each layer derives its own errors from :class:`EgmError` (cards, rng, config, kernel, ledger, devices,
host link). The ``egm`` command turns any :class:`EgmError` into one clear line on stderr and a
non-zero exit; anything else is a bug and keeps its traceback.

:class:`EgmError` itself is defined in ``egmproto.errors``: the reference host derives its errors
from the same root and may import nothing of the terminal, so the root lives in the package both
share (docs/architecture.md, "Errors"). It is named here so that the terminal's modules keep one
place for their root error and :class:`UsageError`.
"""

from egmproto.errors import EgmError

__all__ = ["EgmError", "UsageError"]


class UsageError(EgmError):
    """A command line that asks for something impossible (bad option value, missing file...)."""
