"""``egm rng kat | dump | outcomes``, in process and (for the byte stream) as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.rng.kat import BUILTIN_VECTORS
from firmware.rng.service import RngService

CAVP_RESEED_VECTOR = {
    "name": "pr_false SHA-256 COUNT 0 with reseed",
    "entropy": "06032cd5eed33f39265f49ecb142c511da9aff2af71203bffaf34a9ca5bd9c0d",
    "nonce": "0e66f71edc43e42a45ad3c6fc6cdc4df",
    "pers": None,
    "entropy_reseed": "01920a4e669ed3a85ae8a33b35a74ad7fb2a6bb4cf395ce00334a9c9a5a5d552",
    "add_reseed": None,
    "add": [None, None],
    "expected": (
        "76fc79fe9b50beccc991a11b5635783a83536add03c157fb30645e611c2898bb2b1bc215000209208cd506cb"
        "28da2a51bdb03826aaf2bd2335d576d519160842e7158ad0949d1a9ec3e66ea1b1a064b005de914eac2e9d4f"
        "2d72a8616a80225422918250ff66a41bd2f864a6a38cc5b6499dc43f7f2bd09e1e0f8f5885935124"
    ),
}


@pytest.fixture
def vector_file():
    """The CAVP vectors the product carries, read as a user's file would be."""
    return Path(str(BUILTIN_VECTORS))


def _write(tmp_path, document) -> str:
    path = tmp_path / "vectors.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


# --- kat -------------------------------------------------------------------------------------------


def test_kat_file_passes(vector_file, capsys):
    assert main(["rng", "kat", str(vector_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 23
    assert lines[0] == "0: PASS"
    assert lines[-1] == "22 passed, 0 failed"


def test_kat_without_a_file_runs_the_built_in_vectors_of_both_mechanisms(capsys):
    assert main(["rng", "kat"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "hmac-drbg 0: PASS" and lines[-1] == "50 passed, 0 failed"
    assert lines[22].startswith("ctr-drbg ") and lines[22].endswith(": PASS")
    assert main(["rng", "kat", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["file"], document["passed"], document["failed"]) == ("built-in", 50, 0)
    assert {v["mechanism"] for v in document["vectors"]} == {"hmac-drbg", "ctr-drbg"}
    assert main(["rng", "kat", "--mechanism", "all"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "50 passed, 0 failed"


@pytest.mark.parametrize(("mechanism", "count"), [("hmac-drbg", 22), ("ctr-drbg", 28)])
def test_kat_built_in_vectors_of_one_mechanism(mechanism, count, capsys):
    assert main(["rng", "kat", "--mechanism", mechanism]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == f"{count} passed, 0 failed" and len(lines) == count + 1
    assert not lines[0].startswith(mechanism)  # one mechanism: the names need no prefix


def test_kat_ctr_file_and_a_mechanism_that_disagrees(capsys):
    from firmware.rng.kat import BUILTIN_FILES

    path = str(BUILTIN_FILES["ctr-drbg"])
    assert main(["rng", "kat", path]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "28 passed, 0 failed"
    assert main(["rng", "kat", path, "--mechanism", "all"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "28 passed, 0 failed"
    assert main(["rng", "kat", path, "--mechanism", "hmac-drbg"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds ctr-drbg vectors, not hmac-drbg" in err


def test_selftest_battery_over_ctr_drbg(capsys):
    argv = ["rng", "selftest", "--mechanism", "ctr-drbg", "--seed", "3", "--sequences", "10", "--bits", "20000",
            "--scale", "0.05", "--json"]
    main(argv)  # the verdict is statistics; what is checked here is which source was tested
    document = json.loads(capsys.readouterr().out)
    assert (document["source"], document["mechanism"]) == ("seeded", "ctr-drbg")


def test_kat_built_in_vectors_are_checked_not_trusted(monkeypatch, capsys):
    """A DRBG that drifts from SP 800-90A fails the built-in vectors (the check can fail)."""
    from firmware.rng import hmac_drbg

    real = hmac_drbg.HmacDrbg.generate

    def off_by_one_bit(self, n, additional_input=b""):
        out = bytearray(real(self, n, additional_input))
        out[-1] ^= 1
        return bytes(out)

    monkeypatch.setattr(hmac_drbg.HmacDrbg, "generate", off_by_one_bit)
    assert main(["rng", "kat"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "28 passed, 22 failed"


def test_kat_json(vector_file, capsys):
    assert main(["rng", "kat", str(vector_file), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["passed"], document["failed"]) == (22, 0)
    assert len(document["vectors"]) == 22
    assert {v["result"] for v in document["vectors"]} == {"PASS"}


def test_kat_failing_vector_exits_1(vector_file, tmp_path, capsys):
    document = json.loads(vector_file.read_text())
    document["vectors"][3]["expected"] = "00" + document["vectors"][3]["expected"][2:]
    path = _write(tmp_path, document)
    assert main(["rng", "kat", path]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "3: FAIL" in lines
    assert lines[-1] == "21 passed, 1 failed"
    assert main(["rng", "kat", path, "--json"]) == 1
    failed = [v for v in json.loads(capsys.readouterr().out)["vectors"] if v["result"] == "FAIL"]
    assert [v["name"] for v in failed] == ["3"] and failed[0]["returned"]


def test_kat_runs_optional_reseed_keys(tmp_path, capsys):
    path = _write(tmp_path, {"vectors": [CAVP_RESEED_VECTOR]})
    assert main(["rng", "kat", path]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{ not json", "not a JSON document"),
        ({"vectors": []}, "empty"),
        ({"nothing": 1}, "no 'vectors' list"),
        ({"vectors": [{**CAVP_RESEED_VECTOR, "nonce": "zz"}]}, "'nonce' is not valid hex"),
        (
            {"vectors": [{k: v for k, v in CAVP_RESEED_VECTOR.items() if k != "entropy"}]},
            "missing key 'entropy'",
        ),
        ({"vectors": [{**CAVP_RESEED_VECTOR, "add": [None]}]}, "'add' is not a list of two"),
        ({"vectors": [{**CAVP_RESEED_VECTOR, "entropy": "00" * 8}]}, "refused its inputs"),
    ],
)
def test_kat_malformed_file_is_one_line_exit_2(tmp_path, capsys, content, message):
    assert main(["rng", "kat", _write(tmp_path, content)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert message in captured.err
    if isinstance(content, dict) and content.get("vectors"):
        assert "pr_false SHA-256 COUNT 0 with reseed" in captured.err  # names the vector


def test_kat_missing_file(tmp_path, capsys):
    assert main(["rng", "kat", str(tmp_path / "absent.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


# --- dump ------------------------------------------------------------------------------------------


def test_dump_seeded_is_the_service_stream(capfdbinary):
    assert main(["rng", "dump", "--bytes", "100000", "--seed", "lab"]) == 0
    out = capfdbinary.readouterr().out
    assert out == RngService.seeded("lab").random_bytes(100_000)


def test_dump_production_and_zero_bytes(capfdbinary):
    assert main(["rng", "dump", "--bytes", "4096"]) == 0
    first = capfdbinary.readouterr().out
    assert main(["rng", "dump", "--bytes", "4096"]) == 0
    assert len(first) == 4096 and capfdbinary.readouterr().out != first
    assert main(["rng", "dump", "--bytes", "0"]) == 0
    assert capfdbinary.readouterr().out == b""


def test_dump_ten_million_bytes_subprocess():
    result = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "rng", "dump", "--bytes", "10000000"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout) == 10_000_000
    assert result.stderr == b""


@pytest.mark.parametrize(
    "options", [["--bytes", "10000000"], ["--mechanism", "ctr-drbg", "--bytes", str(10**12)]]
)
def test_dump_into_a_closed_pipe_exits_quietly(options):
    process = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "rng", "dump", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert len(process.stdout.read(10)) == 10
    process.stdout.close()
    stderr = process.stderr.read()
    process.stderr.close()
    assert process.wait(timeout=60) == 0
    assert stderr == b""


@pytest.mark.parametrize("mechanism", ["ctr-drbg", "hmac-drbg"])
def test_dump_mechanism_seeded_is_that_service_stream(mechanism, capfdbinary):
    n = 200_001  # more than three CTR_DRBG requests, not a multiple of anything
    assert main(["rng", "dump", "--mechanism", mechanism, "--bytes", str(n), "--seed", "lab"]) == 0
    out = capfdbinary.readouterr().out
    assert len(out) == n
    assert out == RngService.seeded("lab", mechanism=mechanism).random_bytes(n)


def test_dump_mechanisms_differ(capfdbinary):
    assert main(["rng", "dump", "--mechanism", "ctr-drbg", "--bytes", "64", "--seed", "lab"]) == 0
    ctr = capfdbinary.readouterr().out
    assert main(["rng", "dump", "--bytes", "64", "--seed", "lab"]) == 0
    assert capfdbinary.readouterr().out != ctr


def test_dump_out_writes_the_file_and_nothing_on_stdout(tmp_path, capfdbinary):
    path = tmp_path / "ctr.bin"
    assert main(["rng", "dump", "--mechanism", "ctr-drbg", "--bytes", "150000", "--seed", "9",
                 "--out", str(path)]) == 0
    assert capfdbinary.readouterr().out == b""
    assert path.read_bytes() == RngService.seeded("9", mechanism="ctr-drbg").random_bytes(150_000)
    assert main(["rng", "dump", "--bytes", "5", "--out", str(tmp_path / "absent" / "x.bin")]) == 2
    err = capfdbinary.readouterr().err.decode()
    assert err.count("\n") == 1 and "cannot write" in err


def test_dump_bad_mechanism_is_refused_with_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["rng", "dump", "--mechanism", "aes", "--bytes", "10"])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "invalid choice: 'aes'" in captured.err and "ctr-drbg" in captured.err


# --- outcomes --------------------------------------------------------------------------------------


def test_outcomes_go_through_randbelow(capsys):
    assert main(["rng", "outcomes", "--range", "416", "--count", "5000", "--seed", "7"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rng = RngService.seeded("7")
    assert [int(line) for line in lines] == [rng.randbelow(416) for _ in range(5000)]


def test_outcomes_ctr_go_through_that_service(capsys):
    assert main(["rng", "outcomes", "--mechanism", "ctr-drbg", "--range", "52", "--count", "300",
                 "--seed", "7"]) == 0
    rng = RngService.seeded("7", mechanism="ctr-drbg")
    assert [int(v) for v in capsys.readouterr().out.splitlines()] == [rng.randbelow(52) for _ in range(300)]


def test_outcomes_production_range_and_count(capsys):
    assert main(["rng", "outcomes", "--range", "3", "--count", "9000"]) == 0
    values = [int(line) for line in capsys.readouterr().out.splitlines()]
    assert len(values) == 9000 and set(values) == {0, 1, 2}
    assert main(["rng", "outcomes", "--range", "1", "--count", "0"]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["rng", "outcomes", "--range", "0", "--count", "3"],
        ["rng", "outcomes", "--range", "x", "--count", "3"],
        ["rng", "dump", "--bytes", "-1"],
        ["rng", "dump"],
        ["rng"],
    ],
)
def test_bad_command_lines_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "Traceback" not in capsys.readouterr().err
