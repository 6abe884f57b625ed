"""The lab suite's tests: one file per area, each test marked ``@pytest.mark.hil(...)`` with the
clause it evidences (docs/hil.md, "Adding a test"). Run by ``egm hil run``; never collected by the
project's own test suite (whose testpaths are ``tests``), and never importing ``tests``."""
