"""The hardware half of the device contracts: a skip-unless-attached parameter and the prompts
to the technician standing at the real device."""

from __future__ import annotations

import pytest


def contract_params(hw_port: str, reason: str) -> list:
    """``contract`` fixture params: the simulator always, the hardware when ``hw_port`` is set."""
    return ["simulator",
            pytest.param("hardware", marks=pytest.mark.skipif(not hw_port, reason=reason))]


class Technician:
    """Talks to the person at a real device through the terminal, past pytest's capture."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.capture = request.config.pluginmanager.getplugin("capturemanager")

    def _say(self, text: str) -> str:
        """Print ``text``; a question (ending in ``?``) waits for a typed answer."""
        with self.capture.global_and_fixture_disabled():
            print(f"\n>>> {text}", flush=True)
            return input("... ").strip() if text.endswith("?") else ""
