"""The root of the product's error hierarchy, and the errors of the host link's message envelope.

:class:`EgmError` is here, in the package the terminal and the host share, so that both derive
their errors from one root without importing each other (``firmware.errors`` names it for the
terminal's layers). The ``egm`` command turns any :class:`EgmError` into one clear line on stderr and
a non-zero exit; anything else is a bug and keeps its traceback.

:class:`EnvelopeError` is a misuse on the sending side (a body that does not fit the schema, a bad
sender id, a key of the wrong type) and the base of :class:`EnvelopeRejected`, which the decoder
raises for every envelope it refuses, with one machine-readable reason code (:data:`REASONS`) for the
log and a human-readable message.
"""

from __future__ import annotations

#: Every reason code :class:`EnvelopeRejected` may carry (docs/protocols/host-envelope.md).
REASONS: tuple[str, ...] = (
    "malformed",            # framing, lengths, inner JSON not canonical or missing envelope fields
    "too_large",            # the envelope exceeds MAX_ENVELOPE_BYTES
    "decrypt_failed",       # HPKE open failed (tampered, wrong recipient, wrong KEM)
    "unknown_sender",       # no verification key for the sender id (unknown, foreign, revoked)
    "bad_signature",        # the signature does not verify with the sender's key
    "sender_mismatch",      # outer (header) sender id != inner sender id, or certificate CN != id
    "replay",               # seq <= the last sequence number seen from this sender
    "stale",                # time older than max_age_s
    "future",               # time ahead of now by more than max_skew_s
    "bad_body",             # unknown message type or body not matching the schema
    "unsupported_version",  # protocol version this decoder does not speak
)


class EgmError(Exception):
    """Base of every error the product raises on purpose (terminal, host and their protocol)."""


class HostLinkError(EgmError):
    """Base of the host link's errors."""


class EnvelopeError(HostLinkError):
    """A message that cannot be sealed as asked, or a body that does not fit its schema."""


class EnvelopeRejected(EnvelopeError):
    """The decoder refused an envelope; ``reason_code`` is one of :data:`REASONS`."""

    def __init__(self, reason_code: str, message: str) -> None:
        if reason_code not in REASONS:
            raise ValueError(f"unknown envelope rejection reason {reason_code!r}")
        super().__init__(f"{reason_code}: {message}")
        self.reason_code = reason_code
        self.message = message
