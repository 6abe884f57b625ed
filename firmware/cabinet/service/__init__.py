"""The service API: roles, PINs, one session at a time, and what each role may do (docs/service.md).

The service screens and ``egm simctl service ...`` reach the terminal through one command,
``service``, whose argument is the words typed (``login technician 2222``, ``meters``, ``config set
three-card-poker dealer_cards=4``); ``demo`` is a second command for the demo mode
(:mod:`firmware.cabinet.demo`). Both run on the terminal's own thread, like every command, so a
service action never races a round, a note or a tilt.

* **Roles and PINs** (:mod:`.pins`). Four roles (:data:`ROLES`), one PIN each, kept in the
  configuration only as a salted PBKDF2-HMAC-SHA256 hash (:func:`hash_pin`,
  ``pbkdf2_sha256$ITER$SALT_HEX$HASH_HEX``) and compared in constant time.
* **One session** (:mod:`.sessions`). A login replaces the session before it (both logged); a
  session ends after ``session_timeout_s`` without a request (logged); wrong PINs in a row lock the
  role for a while. Ending a session ends the demo mode.
* **Permissions** are data (:mod:`.table`): :data:`ACTIONS`, one row per action with the roles
  allowed, its kind, its usage and its handler; docs/service.md shows the same table. ``read``
  actions run in any cabinet state; ``device`` and ``config`` actions (and the demo) need the
  technician's key (SERVICE), or IDLE with no credits (:mod:`.guards`); ``attendant`` actions
  follow the terminal's own rules (a handpay needs HANDPAY).
* **The handlers**, by concern: :mod:`.views` (meters, recall, events, bills, tickets, software),
  :mod:`.attendant`, :mod:`.device_tests`, :mod:`.config_actions`, :mod:`.package_actions`,
  :mod:`.ram_clear`, :mod:`.demo_actions`. :class:`ServiceApi` (:mod:`.api`) dispatches to them.
* **Everything is logged** (:mod:`.audit`). Each login (``service_entry``, with its role and
  result), logout, time-out, refusal and action (``service_action``: role, action, result
  ``ok``/``refused`` and a short detail) is a critical-memory event, committed before the answer. A
  refused action changes nothing but that event.
"""

from __future__ import annotations

from firmware.cabinet.service.api import ServiceApi
from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.pins import (
    DEVELOPMENT_PINS,
    ROLES,
    hash_pin,
    parse_pin_hash,
    verify_pin,
)
from firmware.cabinet.service.sessions import LOCKOUT_ATTEMPTS, LOCKOUT_S, Session
from firmware.cabinet.service.table import (
    ACTION_BY_NAME,
    ACTIONS,
    KINDS,
    PERMISSIONS,
    Action,
    permission_table,
)
from firmware.cabinet.service.words import MAX_READ

__all__ = [
    "ACTIONS", "ACTION_BY_NAME", "DEVELOPMENT_PINS", "KINDS", "LOCKOUT_ATTEMPTS", "LOCKOUT_S", "MAX_READ",
    "PERMISSIONS", "ROLES", "Action", "ServiceApi", "ServiceError", "Session", "hash_pin",
    "parse_pin_hash", "permission_table", "verify_pin",
]
