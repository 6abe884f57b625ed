"""The diagnostics page shows the SAS port's link (the status document's ``sas``) beside the devices."""

from __future__ import annotations

from types import SimpleNamespace

from tests.ui.service.conftest import login, settle, texts, touch


def test_the_diagnostics_page_shows_the_sas_link_and_its_port(rig):
    status = {"port": "/dev/pts/9", "address": 4, "link": "down", "polls": 0, "exceptions_pending": 2}
    r = rig(sas=lambda terminal: SimpleNamespace(status=lambda: dict(status), ticket_host=None, numbering=None,
                                                 close=lambda: None, play_held=lambda: None))
    login(r, "technician")
    touch(r, "menu.diagnostics")
    settle(r.app)
    assert texts(r.app, "row.device.sas") == "SAS | link down | address 4 | /dev/pts/9  polls=0  exceptions=2"
    status.update(link="up", polls=12, exceptions_pending=0)
    settle(r.app)
    assert texts(r.app, "row.device.sas") == "SAS | link up | address 4 | /dev/pts/9  polls=12  exceptions=0"
