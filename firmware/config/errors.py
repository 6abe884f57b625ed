"""Errors of the configuration layer."""

from firmware.errors import EgmError


class ConfigError(EgmError):
    """A configuration that cannot be used; the message names the file, the key and what is allowed."""
