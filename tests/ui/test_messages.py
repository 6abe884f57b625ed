"""The message catalogue: every key the code uses exists, none is unused, fields match, and no
screen holds a player-visible English literal of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from firmware.ui import messages
from firmware.ui.messages import MessageError, catalogue, fields_of, key, text

UI = Path(messages.__file__).resolve().parent
SOURCES = sorted(UI.rglob("*.py"))


#: The catalogue's functions, under their names in firmware/ui (the service screens say msg/mkey).
TEXT, KEY = {"text", "msg"}, {"key", "mkey"}


def _calls():
    """Every text(...) and key(...) call in firmware/ui (and their service aliases msg/mkey): (file,
    line, function, first arg node, call); ``msg("a" if x else "b")`` gives each branch."""
    for path in SOURCES:
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in TEXT | KEY:
                if path.name == "messages.py":
                    continue
                func = "text" if node.func.id in TEXT else "key"
                first = node.args[0] if node.args else None
                for arg in ([first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]):
                    yield path, node.lineno, func, arg, node


def used_keys() -> set[str]:
    return {arg.value for _, _, _, arg, _ in _calls()
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)}


def test_every_key_the_code_uses_is_in_the_catalogue():
    missing = sorted(used_keys() - set(catalogue()))
    assert not missing, f"keys used in firmware/ui but missing from messages.toml: {missing}"


def test_no_key_in_the_catalogue_is_unused():
    unused = sorted(set(catalogue()) - used_keys())
    assert not unused, f"keys in messages.toml that no code uses: {unused}"


def test_keys_are_written_out_whole_never_assembled():
    """A key built at run time (an f-string, a + b) would hide from the two tests above."""
    for path, line, func, arg, _ in _calls():
        assert arg is not None, f"{path.name}:{line}: {func}() without a key"
        assert not isinstance(arg, ast.JoinedStr | ast.BinOp), f"{path.name}:{line}: {func}() with an assembled key"
        if func == "key":
            assert isinstance(arg, ast.Constant), f"{path.name}:{line}: key() takes the key itself"


def test_literal_text_calls_give_exactly_the_fields_their_message_needs():
    for path, line, func, arg, call in _calls():
        if func != "text" or not isinstance(arg, ast.Constant) or any(k.arg is None for k in call.keywords):
            continue
        given = {k.arg for k in call.keywords}
        needed = fields_of(catalogue()[arg.value])
        assert given == needed, f"{path.name}:{line}: {arg.value} needs {sorted(needed)}, given {sorted(given)}"


def test_screens_hold_no_english_of_their_own():
    """Drawing code passes only catalogue text: no string literal with two or more words (or a
    capitalised word) reaches a draw call in the screen and widget modules."""
    drawing = [p for p in SOURCES if p.parent.name in ("screens", "livetable")
               or p.name in ("widgets.py", "cards.py", "simpanel.py")
               or (p.parent.name == "games" and p.name != "__init__.py")
               or (p.parent.name == "service" and p.name in ("screen.py", "calibration.py"))]
    draw_calls = {"text", "lines"}
    offenders = []
    for path in drawing:
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in draw_calls and node.args):
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.strip():
                    offenders.append(f"{path.name}:{node.lineno}: {first.value!r}")
    assert not offenders, offenders


def test_text_fills_fields_and_refuses_unknown_keys_and_missing_fields():
    assert text("money.credits", n="2,000") == "2,000 credits"
    with pytest.raises(MessageError, match="no message 'no.such.key'"):
        text("no.such.key")
    with pytest.raises(MessageError, match="needs n"):
        text("money.credits")
    assert key("button.deal") == "button.deal"


def test_every_message_is_a_non_empty_string():
    assert catalogue()
    assert all(isinstance(v, str) and v.strip() for v in catalogue().values())


def test_catalogue_fragments_are_read_and_a_key_defined_twice_is_refused(monkeypatch, tmp_path):
    """A game's words live in ``messages.<part>.toml`` beside the catalogue; a key in two files is
    an error naming the file, never one silently winning."""
    files = {"messages.toml": '[button]\ndeal = "DEAL"\n', "messages.alpha.toml": '[alpha]\nhello = "Hi {name}"\n',
             "notes.toml": '[x]\ny = "ignored"\n'}
    for name, body in files.items():
        (tmp_path / name).write_text(body)

    class Files:
        def joinpath(self, name):
            return tmp_path / name

        def iterdir(self):
            return tmp_path.iterdir()

    monkeypatch.setattr(messages.resources, "files", lambda package: Files())
    messages.catalogue.cache_clear()
    try:
        assert messages.catalogue_files() == ["messages.toml", "messages.alpha.toml"]
        assert messages.catalogue() == {"button.deal": "DEAL", "alpha.hello": "Hi {name}"}
        (tmp_path / "messages.beta.toml").write_text('[button]\ndeal = "GO"\n')
        messages.catalogue.cache_clear()
        with pytest.raises(MessageError, match=r"messages.beta.toml: keys already in the catalogue: button.deal"):
            messages.catalogue()
        (tmp_path / "messages.beta.toml").write_text('[button\n')
        messages.catalogue.cache_clear()
        with pytest.raises(MessageError, match="messages.beta.toml"):
            messages.catalogue()
    finally:
        messages.catalogue.cache_clear()
