"""The root of the product's error hierarchy.

Each layer derives its own errors from :class:`EgmError` (cards, rng, config, kernel, ledger, devices,
host link). The ``egm`` command turns any :class:`EgmError` into one clear line on stderr and a
non-zero exit; anything else is a bug and keeps its traceback.
"""


class EgmError(Exception):
    """Base of every error the product raises on purpose."""


class UsageError(EgmError):
    """A command line that asks for something impossible (bad option value, missing file...)."""
