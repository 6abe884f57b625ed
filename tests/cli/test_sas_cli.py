"""``egm run --sas`` and ``egm sim sas-host`` on the command line: the pty line, the host's
actions over it, and clear errors for bad options."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.sas.helpers import wait_for
from tests.sas.live import running


def egm(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firmware.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_sas_host_reads_the_identity_the_exceptions_and_the_meters_of_egm_run_sas_pty(tmp_path):
    with running(tmp_path) as terminal:
        assert terminal.sas.startswith("/dev/pts/")
        started = "".join(terminal.printed)
        assert started.count(f"sas: {terminal.sas}\n") == 1          # a line of its own, printed once
        info = json.loads(egm("sim", "sas-host", "info", "--port", terminal.sas, "--json").stdout)
        assert info["sas_version"] == "602" and info["serial"] == "EGM-0001" and info["game_id"] == "BW"
        assert info["denomination_code"] == 0x02                        # 5-cent accounting credits
        polled = egm("sim", "sas-host", "poll", "--port", terminal.sas, "--count", "3", "--json")
        assert json.loads(polled.stdout) == {
            "polls": 3, "exceptions": [{"code": "0x17", "exception": "AC_POWER_APPLIED"}]}
        text = egm("sim", "sas-host", "poll", "--port", terminal.sas, "--count", "2")
        assert text.returncode == 0 and text.stdout == ""               # taken: nothing more to say
        meters = json.loads(egm("sim", "sas-host", "meters", "--port", terminal.sas, "--json").stdout)
        assert meters["power_reset"] == 1 and meters["games_played"] == 0 and meters["current_credits"] == 0
        wrong = egm("sim", "sas-host", "info", "--port", terminal.sas, "--address", "9")
        assert wrong.returncode == 2 and "no reply to long poll 0x1F" in wrong.stderr


def test_sas_host_transfers_by_aft_once_and_redeems_a_ticket_in_escrow(tmp_path):
    with running(tmp_path, sas="aft = true\nasset_number = 1234\n") as terminal:
        def host(*args: str) -> dict:
            proc = egm("sim", "sas-host", *args, "--port", terminal.sas, "--json")
            assert proc.returncode == 0, proc.stderr
            return json.loads(proc.stdout)

        aft_in = ("aft-in", "--amount", "2500", "--transaction", "T-1", "--asset", "1234")
        assert host(*aft_in) == {"transaction": "T-1", "transfer_status": "0x00", "cashable_cents": 2500}
        assert host(*aft_in)["transfer_status"] == "0x00"                 # the same transaction again
        assert host("aft-out", "--amount", "1000", "--transaction", "T-2", "--asset", "1234")["cashable_cents"] == 1000
        assert terminal.control("status")["credits_cents"] == 1500       # 2500 in once, 1000 out
        terminal.sim("ticket", "123456789012345678")
        assert host("redeem", "--amount", "500", "--validation", "123456789012345678") == {
            "status": "0x00", "amount_cents": 500, "validation": "123456789012345678"}
        wait_for(lambda: terminal.control("status")["credits_cents"] == 2000)
        again = egm("sim", "sas-host", "redeem", "--port", terminal.sas, "--amount", "500")
        assert again.returncode == 2 and "no ticket in escrow" in again.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (("run", "--sim", "--sas-address", "200"), "--sas-address: Input should be less than or equal to 127"),
    (("run", "--sim", "--sas", "ttyS1"), "--sas: Value error, a device path such as /dev/ttyS1, or 'pty'"),
    (("sim", "sas-host", "--pty"), "give its port with --port PATH"),
    (("sim", "sas-host", "bogus", "--port", "/dev/null"), "unknown sas-host action 'bogus'"),
    (("sim", "sas-host", "info", "--port", "/dev/null", "--address", "0"), "--address 0: a SAS address is 1-127"),
    (("sim", "sas-host", "info", "--port", "/nonexistent/tty"), "cannot open the SAS port /nonexistent/tty"),
    (("sim", "printer", "meters", "--pty"), "printer takes no action word ('meters')"),
    (("sim", "sas-host", "aft-in", "--port", "/dev/null", "--amount", "5"), "aft-in needs --transaction ID"),
    (("sim", "sas-host", "redeem", "--port", "/dev/null"), "redeem needs --amount CENTS"),
])
def test_bad_sas_options_are_one_clear_line(args, needle, tmp_path):
    proc = egm(*args, "--state-dir", str(tmp_path)) if args[0] == "run" else egm(*args)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_sas_port_that_cannot_be_opened_stops_the_start_with_one_line(tmp_path):
    proc = egm("run", "--sim", "--headless", "--autoplay", "0", "--sas", "/nonexistent/tty",
               "--state-dir", str(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("sas: cannot open the SAS port /nonexistent/tty: No such file or directory")
    assert "power-up self-test" not in proc.stdout and not (tmp_path / "ledger.db").exists()   # before the start


def test_sas_host_polls_real_time_events_with_their_data_and_turns_reporting_off_after(tmp_path):
    with running(tmp_path) as terminal:
        terminal.control("game", {"game": "holdem-war"})
        polled = egm("sim", "sas-host", "poll", "--rte", "--port", terminal.sas, "--count", "3", "--json")
        assert json.loads(polled.stdout) == {"polls": 3, "exceptions": [
            {"code": "0x17", "exception": "AC_POWER_APPLIED"},
            {"code": "0x8C", "exception": "GAME_SELECTED", "data": "0003"}]}     # holdem-war: game 3
        assert terminal.control("status")["sas"]["exceptions_pending"] == 0
        text = egm("sim", "sas-host", "poll", "--port", terminal.sas, "--count", "1")
        assert text.returncode == 0 and text.stdout == ""               # reporting off again: 00
