"""The lab suite (``egm hil``): the regulator's tests shipped with the product, on pytest.

A test lab runs it against the simulated cabinet (``egm hil run --target sim``) or a real one
(``--target cabinet.toml``) and gets a JUnit file, an HTML report to sign, a JSON record and the
evidence of every test. The parts: :mod:`.plugin` (the pytest plugin: the ``hil`` marker, the
``cabinet``/``record``/``operator`` fixtures, verdicts), :mod:`.target` (the terminal under test),
:mod:`.operator` (prompts with a time-out), :mod:`.record` (the run record), :mod:`.report` (JUnit,
HTML, JSON), :mod:`.runner` (``pytest.main`` in process), :mod:`.catalogue` (``egm hil list``), and
the tests themselves in :mod:`firmware.hil.suite`. See docs/hil.md.
"""

from __future__ import annotations

from firmware.hil.errors import Blocked, HilError, MeasurementFailure, NeedsOperator, TargetError

__all__ = ["Blocked", "HilError", "MeasurementFailure", "NeedsOperator", "TargetError"]
