"""The ROM signature (0x21) read over the running terminal's pty: the SAS CRC, from the host's seed,
of the software installed (the files ``egm software verify`` checks, in manifest order); another
seed gives another signature, and one changed byte of the installed software another one too (the
terminal run from a copy of its packages, changed between two runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

from drivers.sas.crc import sas_crc
from drivers.sas.host import SasHost
from drivers.sas.messages import RomSignature, RomSignatureRequest
from firmware.cabinet.software import DEFAULT_PACKAGES, default_root, installed_files
from tests.sas.live import host_on, running


def rom_signature(host: SasHost, seed: int) -> int:
    reply = host.read(0x21, RomSignatureRequest(seed).encode())
    assert isinstance(reply, RomSignature)
    return reply.signature


def expected(root: Path, seed: int) -> int:
    """The signature computed here, from the files themselves."""
    return sas_crc(b"".join(data for _path, data in installed_files(root)), seed)


def test_the_signature_read_over_the_pty_is_the_installed_softwares_and_changes_with_the_seed(tmp_path):
    with running(tmp_path) as terminal, host_on(terminal) as host:
        first, other, again = (rom_signature(host, seed) for seed in (0x1234, 0x4321, 0x1234))
        terminal.stop()
    assert first == again == expected(default_root(), 0x1234)
    assert other == expected(default_root(), 0x4321) != first


def test_one_changed_byte_of_the_installed_software_changes_the_signature(tmp_path):
    software = tmp_path / "software"
    for package in DEFAULT_PACKAGES:
        shutil.copytree(default_root() / package, software / package, ignore=shutil.ignore_patterns("__pycache__"))
    with running(tmp_path, software=software) as terminal, host_on(terminal) as host:
        before = rom_signature(host, 0x1234)
        terminal.stop()
    assert before == expected(software, 0x1234)

    target = software / "hal" / "events.py"
    data = bytearray(target.read_bytes())
    where = data.index(b"frozen")                 # a word of the module's docstring: still valid Python
    assert data.index(b'"""') < where < data.index(b'"""', 3)
    data[where] ^= 0x01                           # one bit of one byte: "frozen" -> "grozen"
    target.write_bytes(bytes(data))
    with running(tmp_path, software=software) as terminal, host_on(terminal) as host:
        after = rom_signature(host, 0x1234)
        terminal.stop()
    assert after != before and after == expected(software, 0x1234)
