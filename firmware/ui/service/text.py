"""The service screens' text: the one catalogue (``firmware/ui/messages.toml`` and its fragments;
the service screens' keys, all under ``service.``, are in ``messages.service.toml``).

``msg`` and ``mkey`` are the catalogue's ``text`` and ``key`` under the names the service screens
use; ``tests/ui/test_messages.py`` checks their calls with every other one in ``firmware/ui``.
"""

from __future__ import annotations

from firmware.ui.messages import key as mkey
from firmware.ui.messages import text as msg

__all__ = ["mkey", "msg"]
