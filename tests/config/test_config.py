"""Configuration: the documented defaults, and errors that name the file, the key and what is allowed."""

from __future__ import annotations

import tomllib

import pytest

from firmware.cli import main
from firmware.commands._common import load_terminal_config
from firmware.config import Config, ConfigError, default_toml, load_config
from firmware.games.registry import validate_options


def test_default_file_documents_exactly_the_model_defaults():
    assert load_config() == Config()
    parsed = tomllib.loads(default_toml())
    assert set(parsed) == set(Config.model_fields)
    for section, table in parsed.items():
        fields = set(type(getattr(Config(), section)).model_fields)
        # [games.options.<game>]: the built-in game options (pools off) and commented examples.
        # [devices.settings.<device>]: a real backend's port; commented out (the twins need none).
        assert set(table) == fields if section == "games" else set(table) == fields - {"options", "settings"}, section
    assert parsed["games"]["options"] == Config().games.options


def write(tmp_path, text):
    p = tmp_path / "egm.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[limits]\nmax_bet = 0\n", "limits.max_bet: Input should be greater than or equal to 1 (got 0)"),
        ("[limits]\nmaxbet = 3\n", "limits.maxbet: unknown key; allowed: min_bet, max_bet"),
        ("[limitz]\n", "limitz: unknown key; allowed: terminal, limits"),
        ("[limits]\nmin_bet = 600\n", "min_bet (600) must not exceed max_bet (500)"),
        ("[games]\ndefault = 'poker'\n", "games.default: Input should be 'baccarat-war'"),
        ("[games]\nenabled = ['baccarat-war']\ndefault = 'holdem-war'\n", "is not in enabled"),
        ("[terminal]\nid = 'bad id'\n", "terminal.id: must be 1-32 characters"),
        ("[limits]\nmax_bet = '5'\n", "limits.max_bet: Input should be a valid integer"),
        ("[games.options.baccarat-war]\nwar_scoring = 'fast'\n", "games.options.baccarat-war.war_scoring: "),
        ("[games.options.baccarat-war]\ndecks = 1\nfour_card_pays = '1000,100'\n", "impossible with 1 deck"),
        ("[games.options.roulette]\n", "unknown game(s) roulette"),
        ("[limits\n", "not valid TOML"),
        ("[sas]\naddress = 0\n", "sas.address: Input should be greater than or equal to 1 (got 0)"),
        ("[sas]\naddress = 128\n", "sas.address: Input should be less than or equal to 127 (got 128)"),
        ("[sas]\naddress = '5'\n", "sas.address: Input should be a valid integer"),
        ("[sas]\nvalidation = 'on'\n", "sas.validation: Input should be 'none', 'secure-enhanced' or 'system'"),
        ("[sas]\nport = 'ttyS1'\n", "sas.port: a device path such as /dev/ttyS1, or 'pty'"),
        ("[sas]\naccounting_denom_cents = -5\n", "sas.accounting_denom_cents: Input should be greater than or equal to 0"),
        ("[sas]\naft = 'maybe'\n", "sas.aft: Input should be a valid boolean"),
        ("[sas]\nbaud = 9600\n", "sas.baud: unknown key; allowed: enabled, port, address"),
        ("[sas]\nasset_number = 0\n", "sas.asset_number: Input should be greater than or equal to 1"),
        ("[sas]\naft_transfer_limit_cents = 0\n", "sas.aft_transfer_limit_cents: Input should be greater than or equal to 1"),
    ],
)
def test_bad_configuration_names_file_key_and_allowed(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_terminal_config(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert needle in message, message


def test_game_options_in_config_are_validated_and_used(tmp_path, capsys):
    path = write(tmp_path, "[games.options.baccarat-war]\nwar_scoring = 'high_card'\npool.commission = 2.5\n")
    cfg = load_terminal_config(path)
    assert cfg.games.options["baccarat-war"]["war_scoring"] == "high_card"
    assert main(["round", "baccarat-war", "--config", str(path), "--seed", "1", "--json"]) == 0
    import json
    rec = json.loads(capsys.readouterr().out)
    assert rec["options"]["war_scoring"] == "high_card" and rec["options"]["pool"]["commission"] == 2.5


def test_the_configuration_alone_keeps_game_options_for_the_games_to_check(tmp_path):
    # The configuration sits below the games: it checks a game's options only when told how.
    path = write(tmp_path, "[games.options.baccarat-war]\nwar_scoring = 'fast'\n")
    assert load_config(path).games.options["baccarat-war"] == {"war_scoring": "fast"}
    with pytest.raises(ConfigError, match="games.options.baccarat-war.war_scoring: "):
        load_config(path, check_options=validate_options)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config(tmp_path / "nope.toml")


def test_egm_config_commands(tmp_path, capsys):
    assert main(["config", "default"]) == 0
    assert "[limits]" in capsys.readouterr().out
    good = write(tmp_path, "[terminal]\nid = 'EGM-7'\n")
    assert main(["config", "check", str(good)]) == 0
    assert "ok (terminal EGM-7" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text("[limits]\nmax_bet = -1\n")
    assert main(["config", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "limits.max_bet" in err
