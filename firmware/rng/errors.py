"""Errors of the certified RNG layer.

::

    EgmError
    └── RngError                 anything the RNG layer refuses or detects
        ├── EntropyError         the entropy source failed a health test (SP 800-90B 4.4): a tilt
        ├── DrbgError            misuse of the DRBG (SP 800-90A 9: an ERROR_FLAG)
        │   └── ReseedRequired   the reseed counter passed the reseed interval (SP 800-90A 9.3.1)
        ├── RngRangeError        a bad argument to the integer layer (``randbelow(0)``); a ValueError
        └── KatFileError         a known-answer vector file that cannot be read or is malformed

:class:`EntropyError` is deliberately distinct from the others: the cabinet turns it into a tilt,
and the entropy source that raised it stays failed (latched) until a technician resets it.
"""

from firmware.errors import EgmError


class RngError(EgmError):
    """Base of every error raised by ``firmware.rng``."""


class EntropyError(RngError):
    """The entropy source failed a health test, or returned too few bytes.

    The source is latched in the failed state: every later request raises this error again until
    :meth:`firmware.rng.health.HealthTestedEntropy.reset` is called (a technician clear).
    """


class DrbgError(RngError):
    """The DRBG was asked for something SP 800-90A forbids.

    A request larger than the maximum, inputs too short or too long, or any use after
    ``zeroize()``.
    """


class ReseedRequired(DrbgError):
    """``generate`` was called after ``reseed_interval`` requests without a reseed."""


class RngRangeError(RngError, ValueError):
    """An argument outside its domain: ``randbelow(0)``, ``randbits(0)``, ``draw`` of too many."""


class KatFileError(RngError):
    """A known-answer vector file that is not readable JSON of the expected shape."""
