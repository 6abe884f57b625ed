"""The host database's tables, as one SQLAlchemy Core :data:`metadata` for SQLite and PostgreSQL.

``messages`` is the record of everything a terminal reported (one row per (terminal, seq)); every
other terminal-side table is derived from it inside the same transaction (docs/host-store.md).
Times are :class:`UtcTimestamp`: ``timestamptz`` on PostgreSQL, a fixed-width UTC ISO 8601 string on
SQLite (so that string order is time order); both read back as timezone-aware UTC datetimes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
)
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.types import TypeDecorator, TypeEngine

#: Bumped when the tables change incompatibly; stored in ``host_meta`` and checked at open.
SCHEMA_VERSION = 1

TERMINAL_ID_MAX = 64      #: longest terminal id stored (the envelope allows 32)
TYPE_MAX = 64             #: longest message type / event name / tilt key stored

#: Voucher states on the host. ``authorised`` = a terminal holds it for a redemption in progress.
VOUCHER_STATES: tuple[str, ...] = ("issued", "authorised", "redeemed", "voided")


class UtcTimestamp(TypeDecorator[datetime]):
    """A timezone-aware instant, stored in UTC: ``timestamptz`` on PostgreSQL, text on SQLite."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String(32))
        return dialect.type_descriptor(DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise ValueError(f"expected a timezone-aware datetime, got {value!r}")
        utc = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return utc.isoformat(timespec="microseconds")   # 2025-01-02T03:04:05.000006+00:00
        return utc

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _terminal(name: str = "terminal", nullable: bool = False) -> Column[str]:
    return Column(name, String(TERMINAL_ID_MAX), nullable=nullable)


metadata = MetaData()

#: Key/value integers of the host itself: ``schema_version`` and the ``command_seq`` counter.
host_meta = Table(
    "host_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

#: One row per terminal ever heard from; the per-terminal row lock serialises its ingest.
terminals = Table(
    "terminals", metadata,
    Column("terminal", String(TERMINAL_ID_MAX), primary_key=True),
    Column("first_seen", UtcTimestamp, nullable=False),
    Column("last_seen", UtcTimestamp, nullable=False),          # newest received_at
    Column("last_seq", BigInteger, nullable=False),             # highest seq stored
    Column("message_count", BigInteger, nullable=False),
    Column("disabled", Boolean, nullable=False, default=False),
    Column("disabled_seq", BigInteger),                          # seq of the host.disabled/enabled applied
    Column("power_up_seq", BigInteger),                          # highest seq of a power_up event
    # the key to seal to: the X25519 public key (base64) of the newest hello (highest seq), kept here
    # by every worker's ingest so all workers seal to the terminal's current boot (added at open)
    Column("kem_public", Text),
    Column("kem_seq", BigInteger),
)

#: Columns added to a table after schema version 1 was released: ``add_missing_columns`` adds them
#: to an older database at open (all nullable, so no data is needed).
ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("terminals", "kem_public", "TEXT"),
    ("terminals", "kem_seq", "BIGINT"),
)

#: The lives of each terminal's critical memory (its ``epoch``, new at each RAM clear), numbered
#: 0, 1, 2... per terminal in the order the host first heard of them. A message's ``seq`` in the
#: tables below is its report number within its epoch plus ``idx * EPOCH_SPAN`` (host/store_epochs.py),
#: so (terminal, seq) is (terminal, epoch, report number) and orders a terminal's messages across
#: RAM clears. A table of its own: a database of schema version 1 gains it at open.
terminal_epochs = Table(
    "terminal_epochs", metadata,
    _terminal(),
    Column("epoch", String(TYPE_MAX), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("first_seen", UtcTimestamp, nullable=False),
    PrimaryKeyConstraint("terminal", "epoch", name="terminal_epochs_pk"),
    UniqueConstraint("terminal", "idx", name="terminal_epochs_idx"),
    CheckConstraint("idx >= 0", name="terminal_epochs_idx_nonnegative"),
)

#: Every stored terminal message, exactly as received. (terminal, seq) is the duplicate check.
messages = Table(
    "messages", metadata,
    _terminal(),
    Column("seq", BigInteger, nullable=False),
    Column("type", String(TYPE_MAX), nullable=False),
    Column("sent_at", UtcTimestamp, nullable=False),
    Column("received_at", UtcTimestamp, nullable=False),
    Column("body", JSON, nullable=False),
    # the primary key is the UNIQUE(terminal, seq) that makes ingest idempotent
    PrimaryKeyConstraint("terminal", "seq", name="messages_pk"),
    CheckConstraint("seq >= 0", name="messages_seq_nonnegative"),
    Index("messages_type", "terminal", "type"),
)


def _derived(name: str, *columns: Any) -> Table:
    """A table with one row per message of one type: keyed by, and cascading with, the message."""
    return Table(
        name, metadata,
        _terminal(),
        Column("seq", BigInteger, nullable=False),
        *columns,
        ForeignKeyConstraint(["terminal", "seq"], ["messages.terminal", "messages.seq"],
                             ondelete="CASCADE", name=f"{name}_message_fk"),
        PrimaryKeyConstraint("terminal", "seq", name=f"{name}_pk"),
    )


#: ``meters`` messages; the newest of a terminal is the one with the highest seq.
meters_history = _derived(
    "meters_history",
    Column("sent_at", UtcTimestamp, nullable=False),
    Column("credits", BigInteger),
    Column("body", JSON, nullable=False),
)

#: ``event`` messages.
events = _derived(
    "events",
    Column("name", String(TYPE_MAX), nullable=False),
    Column("sent_at", UtcTimestamp, nullable=False),
    Column("data", JSON, nullable=False),
    Index("events_sent_at", "sent_at"),
    Index("events_name", "name"),
)

#: ``round`` messages (round records).
rounds = _derived(
    "rounds",
    Column("round_id", String(TYPE_MAX)),
    Column("game", String(TYPE_MAX)),
    Column("sent_at", UtcTimestamp, nullable=False),
    Column("record", JSON, nullable=False),
    Index("rounds_sent_at", "sent_at"),
    Index("rounds_round_id", "round_id"),
)

#: Tilt state per (terminal, tilt key); ``changed_seq`` orders late arrivals.
tilts = Table(
    "tilts", metadata,
    _terminal(),
    Column("tilt", String(TYPE_MAX), nullable=False),
    Column("open", Boolean, nullable=False),
    Column("reason", Text),
    Column("changed_seq", BigInteger, nullable=False),
    Column("changed_at", UtcTimestamp, nullable=False),
    PrimaryKeyConstraint("terminal", "tilt", name="tilts_pk"),
    ForeignKeyConstraint(["terminal"], ["terminals.terminal"], ondelete="CASCADE",
                         name="tilts_terminal_fk"),
)

#: TITO vouchers as the host knows them (issued by ``ticket_out``, redeemed by ``ticket_in``).
vouchers = Table(
    "vouchers", metadata,
    Column("validation", String(18), primary_key=True),
    Column("amount_cents", BigInteger, nullable=False),
    Column("state", String(16), nullable=False),
    Column("issued_by", String(TERMINAL_ID_MAX)),
    Column("issued_seq", BigInteger),
    Column("issued_at", UtcTimestamp),
    Column("held_by", String(TERMINAL_ID_MAX)),
    Column("authorised_at", UtcTimestamp),
    Column("redeemed_by", String(TERMINAL_ID_MAX)),
    Column("redeemed_seq", BigInteger),
    Column("redeemed_at", UtcTimestamp),
    Column("created_at", UtcTimestamp, nullable=False),
    CheckConstraint("state IN ('issued', 'authorised', 'redeemed', 'voided')",
                    name="vouchers_state_known"),
    CheckConstraint("(state = 'authorised') = (held_by IS NOT NULL)",
                    name="vouchers_held_iff_authorised"),
    Index("vouchers_issued_by", "issued_by"),
    Index("vouchers_redeemed_by", "redeemed_by"),
)

#: What a voucher's issuer said of it when it issued it (its ``voucher`` record in state ``issued``):
#: whether the issuer may pay it without the host. The host approves a voucher at a terminal other
#: than its issuer only when this row is here and says it may not (docs/cashless.md). A table of its
#: own, not columns of ``vouchers``: a database of schema version 1 gains it at open.
voucher_terms = Table(
    "voucher_terms", metadata,
    Column("validation", String(18), primary_key=True),
    _terminal("issued_by"),
    Column("seq", BigInteger, nullable=False),
    Column("offline_redemption", Boolean, nullable=False),
)

#: Host -> terminal commands, keyed by the host's command sequence number.
commands = Table(
    "commands", metadata,
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    _terminal(),
    Column("type", String(TYPE_MAX), nullable=False),
    Column("body", JSON, nullable=False),
    Column("created_at", UtcTimestamp, nullable=False),
    Index("commands_terminal", "terminal", "seq"),
)

#: Host commands to a terminal until it confirms them applied: numbered 1, 2, 3... per terminal
#: (``cmd``, the same number at every resend), sent again until a ``host.command`` event of the
#: terminal's confirms them (``confirmed_seq``: that report's seq). docs/protocols/host-session.md.
terminal_commands = Table(
    "terminal_commands", metadata,
    _terminal(),
    Column("cmd", BigInteger, nullable=False),
    Column("type", String(TYPE_MAX), nullable=False),
    Column("body", JSON, nullable=False),
    Column("queued_at", UtcTimestamp, nullable=False),
    Column("sent_at", UtcTimestamp),
    Column("sends", Integer, nullable=False),
    Column("confirmed_seq", BigInteger),
    Column("confirmed_at", UtcTimestamp),
    PrimaryKeyConstraint("terminal", "cmd", name="terminal_commands_pk"),
    CheckConstraint("cmd >= 1", name="terminal_commands_cmd_positive"),
    Index("terminal_commands_pending", "confirmed_seq", "terminal", "cmd"),
)

#: Commands waiting to be sent (queued by ``egm host disable`` and friends, taken by the server).
command_queue = Table(
    "command_queue", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    _terminal(),
    Column("type", String(TYPE_MAX), nullable=False),
    Column("body", JSON, nullable=False),
    Column("queued_at", UtcTimestamp, nullable=False),
    Column("taken_at", UtcTimestamp),
    Index("command_queue_pending", "taken_at", "id"),
)

#: Envelopes the host refused (they never reach ``messages``).
rejections = Table(
    "rejections", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UtcTimestamp, nullable=False),
    _terminal(nullable=True),
    Column("reason", String(TYPE_MAX), nullable=False),
    Column("detail", Text, nullable=False),
    Column("size", BigInteger, nullable=False),
)


def add_missing_columns(engine: Engine) -> None:
    """``ALTER TABLE ... ADD COLUMN`` for each of :data:`ADDED_COLUMNS` an older database lacks.
    Several processes may open the database at once: PostgreSQL's ``IF NOT EXISTS`` and SQLite's
    write lock (checked again inside it) make that safe."""
    have = {(t, c["name"]) for t in {t for t, _c, _k in ADDED_COLUMNS}
            for c in inspect(engine).get_columns(t)}
    missing = [a for a in ADDED_COLUMNS if (a[0], a[1]) not in have]
    if not missing:
        return
    with engine.execution_options(sqlite_begin="IMMEDIATE").begin() as conn:
        for table, column, kind in missing:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")
            elif column not in {c["name"] for c in inspect(conn).get_columns(table)}:
                conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


#: Roles of the people who use the floor page (docs/floor-web.md).
OPERATOR_ROLES: tuple[str, ...] = ("attendant", "floor-manager", "auditor")

#: The people who log in to the floor page (``egm host operator add``): an argon2id password hash,
#: never the password. A table of its own: a database of schema version 1 gains it at open.
operators = Table(
    "operators", metadata,
    Column("name", String(TERMINAL_ID_MAX), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("password_hash", Text, nullable=False),
    Column("created_at", UtcTimestamp, nullable=False),
    Column("disabled", Boolean, nullable=False, default=False),
    CheckConstraint("role IN ('attendant', 'floor-manager', 'auditor')", name="operators_role_known"),
)

#: What operators did on the floor page: logins (successful or not), commands sent (with the
#: command queue id), look-ups and refused requests. Rows are only ever added.
operator_log = Table(
    "operator_log", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UtcTimestamp, nullable=False),
    Column("operator", String(TERMINAL_ID_MAX), nullable=False),
    Column("role", String(16)),
    Column("action", String(TYPE_MAX), nullable=False),
    _terminal(nullable=True),
    Column("detail", Text, nullable=False),
    Column("result", String(TYPE_MAX), nullable=False),
    Index("operator_log_terminal", "terminal", "id"),
)
