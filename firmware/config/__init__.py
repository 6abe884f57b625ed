"""Typed configuration from TOML, validated with errors that name the file, the key and what is allowed."""

from firmware.config.errors import ConfigError
from firmware.config.loader import default_toml, load_config, validate_config
from firmware.config.schema import GAME_IDS, Config

__all__ = ["GAME_IDS", "Config", "ConfigError", "default_toml", "load_config", "validate_config"]
