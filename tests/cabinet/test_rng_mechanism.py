"""``[rng] mechanism``: the configuration chooses the terminal's DRBG; the power-up self-test proves
both mechanisms' known answers and instantiates the configured one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from firmware.cabinet.selftest import rng_power_up_test, terminal_rng
from firmware.config.errors import ConfigError
from firmware.config.loader import validate_config
from firmware.rng.ctr_drbg import CtrDrbg
from firmware.rng.hmac_drbg import HmacDrbg


@pytest.mark.parametrize(("mechanism", "drbg"), [("ctr-drbg", CtrDrbg), ("hmac-drbg", HmacDrbg)])
def test_the_configured_mechanism_is_the_terminals_drbg(mechanism, drbg):
    cfg = validate_config({"rng": {"mechanism": mechanism, "reseed_interval": 7}})
    rng = terminal_rng(cfg)
    assert rng.mechanism == mechanism and isinstance(rng._drbg, drbg)
    assert rng._drbg.reseed_interval == 7 and not rng.deterministic
    assert rng_power_up_test(cfg)[-1] == (f"DRBG instantiated: {mechanism}", "ok")


def test_the_default_stays_hmac_drbg():
    assert terminal_rng(validate_config({})).mechanism == "hmac-drbg"


def test_a_bad_mechanism_is_refused_naming_the_choices():
    with pytest.raises(ConfigError, match=r"rng.mechanism: Input should be 'hmac-drbg' or 'ctr-drbg' \(got 'aes'\)"):
        validate_config({"rng": {"mechanism": "aes"}}, source="x.toml")


def test_power_up_checks_both_known_answers(monkeypatch):
    from firmware.rng import ctr_drbg, power_up

    real = ctr_drbg.CtrDrbg.generate

    def one_bit_off(self, n, additional_input=b""):
        out = bytearray(real(self, n, additional_input))
        out[0] ^= 0x80
        return bytes(out)

    monkeypatch.setattr(ctr_drbg.CtrDrbg, "generate", one_bit_off)
    with pytest.raises(power_up.KnownAnswerFailure, match="CTR_DRBG"):
        power_up.power_up_self_test(mechanism="hmac-drbg")  # a broken CTR_DRBG fails any terminal


def test_egm_run_with_ctr_drbg_configured(tmp_path):
    config = tmp_path / "egm.toml"
    config.write_text('[rng]\nmechanism = "ctr-drbg"\n')
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--autoplay", "2",
                           "--config", str(config), "--state-dir", str(tmp_path / "state")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [line.strip() for line in proc.stdout.splitlines()]
    assert any(line.startswith("DRBG instantiated: ctr-drbg") and line.endswith("ok") for line in lines), proc.stdout
    assert "accounting identity holds" in proc.stdout
