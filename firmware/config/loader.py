"""Reading and validating configuration files (TOML).

Errors name the file, the key and what is allowed, e.g.::

    egm.toml: limits.max_bet: Input should be greater than or equal to 1 (got 0)
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from firmware.config.errors import ConfigError
from firmware.config.schema import Config
from firmware.config.validation import describe_validation_error

DEFAULT_FILE_NAME = "default.toml"


def default_toml() -> str:
    """The documented default configuration file shipped with the firmware."""
    return resources.files("firmware.config").joinpath(DEFAULT_FILE_NAME).read_text("utf-8")


def validate_config(data: Mapping[str, Any], *, source: str = "<config>") -> Config:
    """Validate a parsed TOML document, including every enabled game's options."""
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = describe_validation_error(exc, Config)
        raise ConfigError(f"{source}: {problems}") from None
    _validate_game_options(config, source)
    return config


def _validate_game_options(config: Config, source: str) -> None:
    """Check ``[games.options.<game>]`` against each game's options model, when the game exists."""
    try:
        from firmware.games.registry import validate_options
    except ImportError:  # games arrive with the war-kernel issue
        return
    for game_id, table in config.games.options.items():
        try:
            validate_options(game_id, table)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None


def load_config(path: str | Path | None = None) -> Config:
    """Load ``path`` (TOML), or the built-in defaults when ``path`` is None."""
    if path is None:
        return validate_config(tomllib.loads(default_toml()), source=DEFAULT_FILE_NAME)
    p = Path(path)
    try:
        text = p.read_text("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such configuration file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML: {exc}") from None
    return validate_config(data, source=str(p))
