"""The service screens' text: every key used is in a catalogue, none of the service catalogue's is
unused, the fields match, keys are written out whole, and the drawing code holds no English."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from firmware.ui import messages
from firmware.ui.messages import MessageError, fields_of
from firmware.ui.service import text as service_text
from firmware.ui.service.text import has, msg, service_catalogue

PACKAGE = Path(service_text.__file__).resolve().parent
SOURCES = sorted(PACKAGE.glob("*.py"))


def _calls():
    """Every msg(...) / mkey(...) call: (file, line, function, key nodes, call)."""
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("msg", "mkey") and path.name != "text.py"):
                first = node.args[0] if node.args else None
                keys = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
                yield path, node.lineno, node.func.id, keys, node


def used_keys() -> set[str]:
    return {k.value for _, _, _, keys, _ in _calls() for k in keys
            if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def test_every_key_used_is_in_a_catalogue():
    missing = sorted(k for k in used_keys() if not has(k))
    assert not missing, f"keys used in firmware/ui/service but in no catalogue: {missing}"


def test_no_service_key_is_unused_or_also_in_the_core_catalogue():
    unused = sorted(set(service_catalogue()) - used_keys())
    assert not unused, f"keys in service/messages.toml that no code uses: {unused}"
    moved = sorted(k for k in service_catalogue() if messages.has(k))
    assert not moved, f"keys now in firmware/ui/messages.toml: delete them from service/messages.toml: {moved}"
    assert all(k.startswith("service.") for k in service_catalogue())


def test_keys_are_written_out_whole():
    for path, line, func, keys, _ in _calls():
        for k in keys:
            assert k is not None, f"{path.name}:{line}: {func}() without a key"
            assert not isinstance(k, ast.JoinedStr | ast.BinOp), f"{path.name}:{line}: an assembled key"
            if func == "mkey":
                assert isinstance(k, ast.Constant), f"{path.name}:{line}: mkey() takes the key itself"


def test_literal_calls_give_exactly_the_fields_their_message_needs():
    for path, line, func, keys, call in _calls():
        if func != "msg" or any(k.arg is None for k in call.keywords):
            continue
        for k in keys:
            if isinstance(k, ast.Constant):
                given = {kw.arg for kw in call.keywords}
                needed = fields_of(messages.catalogue().get(k.value)
                                   or service_catalogue()[k.value])
                assert given == needed, f"{path.name}:{line}: {k.value} needs {sorted(needed)}, given {sorted(given)}"


def test_the_drawing_code_passes_only_catalogue_text():
    offenders = []
    for path in (PACKAGE / "screen.py", PACKAGE / "calibration.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("text", "lines") and node.args):
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.strip():
                    offenders.append(f"{path.name}:{node.lineno}: {first.value!r}")
    assert not offenders, offenders


def test_msg_reads_the_core_catalogue_first_and_refuses_unknown_keys_and_missing_fields():
    assert msg("button.next") == messages.text("button.next")
    assert msg("service.page_of", page=2, pages=5) == "Page 2 of 5"
    with pytest.raises(MessageError, match="no message 'service.nothing.here'"):
        msg("service.nothing.here")
    with pytest.raises(MessageError, match="needs pages"):
        msg("service.page_of", page=1)
