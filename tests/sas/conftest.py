"""A real ledger for the SAS tests (accounting and game denomination: 5 cents)."""

from __future__ import annotations

import pytest

from firmware.ledger.ledger import Ledger


@pytest.fixture
def ledger(tmp_path):
    with Ledger.open(tmp_path / "state", denomination=5) as ledger:
        yield ledger
