"""Reading and validating configuration files (TOML).

Errors name the file, the key and what is allowed, e.g.::

    egm.toml: limits.max_bet: Input should be greater than or equal to 1 (got 0)

The games sit above the configuration (a game's options model is the game's own), so this module
does not know them: a caller that knows both passes ``check_options`` (the ``egm`` commands pass
:func:`firmware.games.registry.validate_options`, ``firmware.commands._common.load_terminal_config``),
and each ``[games.options.<game>]`` table is checked at load time. Without it the tables are kept as
given, and a game checks its own when it builds its options (``configured_options``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from firmware.config.errors import ConfigError
from firmware.config.schema import Config
from firmware.config.validation import describe_validation_error

DEFAULT_FILE_NAME = "default.toml"

#: ``check(game_id, table)``: accepts one ``[games.options.<game>]`` table or raises ConfigError.
OptionsCheck = Callable[[str, Mapping[str, Any]], object]


def default_toml() -> str:
    """The documented default configuration file shipped with the firmware."""
    return resources.files("firmware.config").joinpath(DEFAULT_FILE_NAME).read_text("utf-8")


def validate_config(data: Mapping[str, Any], *, source: str = "<config>",
                    check_options: OptionsCheck | None = None) -> Config:
    """Validate a parsed TOML document; with ``check_options``, every game's options table too."""
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = describe_validation_error(exc, Config)
        raise ConfigError(f"{source}: {problems}") from None
    if check_options is not None:
        for game_id, table in config.games.options.items():
            try:
                check_options(game_id, table)
            except ConfigError as exc:
                raise ConfigError(f"{source}: {exc}") from None
    return config


def load_config(path: str | Path | None = None, *, check_options: OptionsCheck | None = None) -> Config:
    """Load ``path`` (TOML), or the built-in defaults when ``path`` is None (``check_options``: as
    :func:`validate_config`)."""
    if path is None:
        return validate_config(tomllib.loads(default_toml()), source=DEFAULT_FILE_NAME,
                               check_options=check_options)
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
    return validate_config(data, source=str(p), check_options=check_options)
