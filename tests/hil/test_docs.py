"""docs/hil.md lists every test of the suite (its table is `egm hil list --markdown`)."""

from __future__ import annotations

from pathlib import Path

from firmware.hil.catalogue import collect, markdown_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "hil.md"


def test_docs_list_every_test_as_the_catalogue_makes_it():
    text = DOC.read_text()
    table = text.split("<!-- hil-catalogue:begin -->\n", 1)[1].split("<!-- hil-catalogue:end -->", 1)[0]
    entries = collect()
    for entry in entries:
        assert f"| `{entry['id']}` |" in table, f"docs/hil.md does not list {entry['id']} (egm hil list --markdown)"
    assert table == markdown_table(entries), "docs/hil.md's table is stale: paste `egm hil list --markdown`"
