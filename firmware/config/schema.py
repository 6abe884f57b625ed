"""The terminal's configuration, typed and validated.

Every section is a pydantic model with ``extra="forbid"``: a misspelt key is an error that names the
key and lists the allowed ones, never a silently ignored setting. Amounts are integer credits unless
a name says ``_cents``. Game options are validated by the game's own options model
(``firmware.games``), looked up by game id.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

GAME_IDS: tuple[str, ...] = (
    "baccarat-war",
    "blackjack-war",
    "holdem-war",
    "three-card-poker",
    "split21-stud",
    "double-super-9",
)

#: The terminal's built-in game options: the multi-player pools are off on a one-seat cabinet
#: (default.toml says why).
ONE_SEAT_OPTIONS: dict[str, dict[str, Any]] = {
    "baccarat-war": {"pool": {"enabled": False}},
    "blackjack-war": {"pool": {"enabled": False}},
    "holdem-war": {"pool": {"enabled": False}},
    "split21-stud": {"jackpot": {"enabled": False}},
}

Credits = Annotated[int, Field(ge=0, strict=True)]
PositiveCredits = Annotated[int, Field(ge=1, strict=True)]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class TerminalSection(Section):
    id: str = Field("EGM-0001", description="terminal id; the host and its certificate use it")
    venue: str = Field("Development Casino", min_length=1, max_length=40)
    denomination: PositiveCredits = Field(1, description="cents per credit")
    currency: str = Field("USD", pattern=r"^[A-Z]{3}$")
    locale: str = "en_US"

    @field_validator("id")
    @classmethod
    def _id_chars(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}", v):
            raise ValueError(
                "must be 1-32 characters of letters, digits, '-', '_' or '.', starting with a letter or digit"
            )
        return v


class LimitsSection(Section):
    min_bet: PositiveCredits = Field(1, description="smallest wager on any bet")
    max_bet: PositiveCredits = Field(500, description="largest single wager")
    max_total_bet: PositiveCredits = Field(5000, description="largest total stake of one round")
    max_credits: PositiveCredits = Field(1_000_000, description="credit meter limit: notes are refused above")
    handpay_limit: PositiveCredits = Field(
        120_000, description="a cash-out or a win at or above this locks up for an attendant handpay"
    )

    @model_validator(mode="after")
    def _ordered(self) -> LimitsSection:
        if self.min_bet > self.max_bet:
            raise ValueError(f"min_bet ({self.min_bet}) must not exceed max_bet ({self.max_bet})")
        if self.max_bet > self.max_total_bet:
            raise ValueError(
                f"max_bet ({self.max_bet}) must not exceed max_total_bet ({self.max_total_bet})"
            )
        return self


class GamesSection(Section):
    enabled: list[Literal[GAME_IDS]] = Field(default_factory=lambda: list(GAME_IDS), min_length=1)  # type: ignore[valid-type]
    default: Literal[GAME_IDS] = "baccarat-war"  # type: ignore[valid-type]
    seats: int = Field(1, ge=1, le=7, description="seats one player covers at the terminal (multi-hand)")
    decision_timeout_s: int = Field(
        60, ge=5, le=3600, description="seconds a player has to decide; then the documented default applies"
    )
    #: Per-game option tables, ``[games.options.baccarat-war]``; validated by each game's options model.
    #: By default the pools are off: with one seat they return 45% (docs/math/README.md).
    options: dict[str, dict[str, Any]] = Field(default_factory=lambda: {
        game: dict(table) for game, table in ONE_SEAT_OPTIONS.items()})

    @model_validator(mode="after")
    def _default_enabled(self) -> GamesSection:
        if len(set(self.enabled)) != len(self.enabled):
            raise ValueError("enabled lists a game twice")
        if self.default not in self.enabled:
            raise ValueError(f"default game {self.default!r} is not in enabled {self.enabled}")
        unknown = sorted(set(self.options) - set(GAME_IDS))
        if unknown:
            raise ValueError(
                f"options for unknown game(s) {', '.join(unknown)}; games are {', '.join(GAME_IDS)}"
            )
        return self


class RngSection(Section):
    #: The DRBG mechanism (firmware.rng.mechanisms.MECHANISMS): SP 800-90A HMAC_DRBG (SHA-256) or
    #: CTR_DRBG (AES-256 with the derivation function).
    mechanism: Literal["hmac-drbg", "ctr-drbg"] = "hmac-drbg"
    reseed_interval: int = Field(
        1 << 20, ge=1, le=1 << 48, description="DRBG generate calls between reseeds (SP 800-90A: <= 2^48)"
    )
    personalization: str = Field("egm", max_length=64)


class DevicesSection(Section):
    """Which HAL backend drives each device class (``sim:<backend>`` = its simulated twin on a pty,
    ``none`` = no such device), and each real backend's settings (its ``port``, ...)."""

    bill_validator: str = "sim:id003"
    printer: str = "sim:tcl"
    touch: str = "sim:microtouch"
    shoe: str = "none"
    io_board: str = "sim:io"
    #: ``[devices.settings.bill_validator] port = "/dev/ttyUSB0"``: keyword arguments of the backend.
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known(self) -> DevicesSection:
        from hal.errors import BackendError
        from hal.registry import parse_spec

        for field in DEVICE_FIELDS:
            try:
                parse_spec(DEVICE_FIELDS[field], getattr(self, field))
            except BackendError as exc:
                raise ValueError(str(exc)) from None
        unknown = sorted(set(self.settings) - set(DEVICE_FIELDS))
        if unknown:
            raise ValueError(f"settings for unknown device(s) {', '.join(unknown)}; "
                             f"devices are {', '.join(DEVICE_FIELDS)}")
        return self


#: Configuration field -> the HAL registry's device class.
DEVICE_FIELDS: dict[str, str] = {
    "bill_validator": "bill_validator", "printer": "printer", "touch": "touch", "shoe": "shoe",
    "io_board": "io",
}


class MoneySection(Section):
    """Notes, vouchers and what the cabinet takes."""

    notes_cents: list[Annotated[int, Field(ge=1, strict=True)]] = Field(
        default_factory=lambda: [100, 500, 1000, 2000, 5000, 10000],
        description="note values the validator accepts, in cents")
    tickets_in: bool = Field(True, description="accept vouchers in the bill validator")
    offline_redemption: bool = Field(
        False, description="redeem this terminal's own vouchers when no host can validate them; "
                           "such vouchers then redeem at this terminal only (docs/cashless.md)")
    voucher_expiry_days: int = Field(30, ge=0, le=3650, description="0: vouchers never expire")
    venue_address: list[Annotated[str, Field(max_length=40)]] = Field(
        default_factory=lambda: ["1 Casino Way", "Las Vegas NV"], max_length=2)

    @field_validator("notes_cents")
    @classmethod
    def _distinct(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError("a note value is listed twice")
        return sorted(v)


class CabinetSection(Section):
    """The running terminal."""

    card_delay_ms: int = Field(0, ge=0, le=5000,
                               description="pause before each card is dealt (the table's pace; 0: none)")
    reconnect_interval_s: float = Field(1.0, gt=0, le=60,
                                        description="how often a lost device is tried again")
    autoplay_cashout_every: int = Field(25, ge=1, le=100_000,
                                        description="autoplay cashes out by ticket every N rounds")


class HostSection(Section):
    """The host link (firmware/hostlink, docs/hostlink.md)."""

    enabled: bool = True
    broker: str = Field("embedded", description="'embedded' (a broker and reference host in this process), "
                        "or mqtt(s)://HOST:PORT of the casino broker (a cluster: mqtts://H1:P1,H2:P2,...; "
                        "the link goes on to the next node when one fails)")
    meter_interval_s: int = Field(300, ge=10, le=86_400)
    pki: str = Field("", description="PKI directory (ca.cert.pem, crl.pem, issued/); '' = the development "
                     "PKI in <state-dir>/pki, created on first start")
    host_name: str = Field("egm-host", min_length=1, description="the host's signing certificate (issued/<name>)")
    host_kem: str = Field("egm-host.kem", min_length=1, description="the host's encryption certificate")
    ack_timeout_s: float = Field(5.0, ge=0.1, le=600, description="resend a report not acknowledged by then")
    window: int = Field(64, ge=1, le=10_000, description="reports in flight at once")
    max_age_s: int = Field(300, ge=10, le=86_400, description="host messages older than this are refused")
    redeem_timeout_s: float = Field(5.0, ge=0.5, le=60, description="how long a voucher waits for the host")
    drain_s: float = Field(2.0, ge=0, le=60, description="at shutdown, how long to try to deliver the outbox")


class SasSection(Section):
    """The SAS port (SAS 6.02 to a casino management system: docs/protocols/sas.md)."""

    enabled: bool = Field(False, description="open the SAS port at start (egm run --sas turns it on)")
    port: str = Field("pty", min_length=1, max_length=200,
                      description="the serial device (e.g. /dev/ttyS1), or 'pty': a pseudo-terminal for a host tool")
    address: int = Field(1, ge=1, le=127, strict=True, description="the machine's SAS address (1-127)")
    accounting_denom_cents: Credits = Field(
        0, description="cents per credit of the SAS meters (0: terminal.denomination)")
    validation: Literal["none", "secure-enhanced", "system"] = Field(
        "secure-enhanced", description="ticket validation: 'none', 'secure-enhanced' (the machine makes the "
        "number) or 'system' (the host gives it)")
    aft: bool = Field(False, description="advanced funds transfer (in-house cashable) from the host")
    asset_number: int = Field(1, ge=1, le=0xFFFFFFFF, strict=True,
                              description="the machine's asset number (TITO and AFT report it; AFT checks it)")
    aft_transfer_limit_cents: PositiveCredits = Field(
        100_000, description="the largest AFT transfer, in cents (AFT reports it; larger ones are refused)")

    @field_validator("port")
    @classmethod
    def _device_path(cls, v: str) -> str:
        if v != "pty" and not v.startswith("/"):
            raise ValueError("a device path such as /dev/ttyS1, or 'pty'")
        return v


class MathSection(Section):
    """The game-math check of the configuration (firmware/math/profile.py)."""

    profile: str = Field("default", min_length=1,
                         description="jurisdiction profile: a built-in name or a TOML file")
    monte_carlo_rounds: int = Field(
        200_000, ge=10_000, le=100_000_000,
        description="rounds behind a wager that only Monte Carlo reaches (its sheet is cached)",
    )


class SoftwareSection(Section):
    """Software verification at power-up (firmware/cabinet/software.py, docs/software-verification.md)."""

    development: bool = Field(
        True, description="trust the checkout's own development signer (proves nothing: never on a floor)")
    manifest: str = Field("", description="the signed manifest of the installed build ('': development's)")
    trusted_keys: list[str] = Field(default_factory=list, description="code signers' public keys (PEM files)")


class UpdateSection(Section):
    """The field update (docs/update.md): how ``egm run`` and ``egm update`` reach the A/B slots."""

    backend: Literal["none", "directory", "rauc"] = Field(
        "none", description="'none': no field update; 'directory': the A/B pair of application trees in "
        "dir (evaluation, tests); 'rauc': RAUC's A/B partitions and its bootloader (a cabinet)")
    dir: str = Field("/var/lib/egm/update", min_length=1,
                     description="the directory backend's A/B pair; the rauc backend's events awaiting critical memory")
    crl: str = Field("/var/lib/egm/pki/crl.pem",
                     description="the casino CA's CRL checked against a bundle's signer ('': none)")


#: The service roles (firmware/cabinet/service/pins.py: one PIN each).
SERVICE_ROLES: tuple[str, ...] = ("attendant", "technician", "auditor", "regulator")

#: The development PINs 1111 (attendant), 2222 (technician), 3333 (auditor), 4444 (regulator),
#: hashed: documented defaults that must be changed before a terminal leaves the lab (a login with
#: one is logged as ``service_default_pin``).
DEVELOPMENT_PIN_HASHES: dict[str, str] = {
    "attendant": "pbkdf2_sha256$310000$76da21dc813cb867928eaba00559d735$"
                 "f46fbb0f148036c07376c844bec5fdb68e4f1d13887276f7de8a1c11fbfbafa4",
    "technician": "pbkdf2_sha256$310000$35e33f5a99f8a5349de5798fc3b2a200$"
                  "1f8c50c7143f28d5d5d8beec522ffc4b333604079e28280816d5d32b9e4c3ba3",
    "auditor": "pbkdf2_sha256$310000$be7f06017c7839efe68472eb5c2f9d0f$"
               "4ab61475bd856a5c158c8e945b1c2412409ddd985beb494d0ff256f8cec0ad4c",
    "regulator": "pbkdf2_sha256$310000$4bb47b50643b4997955fb32019cf3387$"
                 "fd4b84b8abc5eebbbdfc037d9098297d14c1403fc93f65a9ff4f85589c2d8c2c",
}

#: ``pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX`` (at least 16 bytes of salt, a 32-byte hash).
PIN_HASH_PATTERN = re.compile(r"pbkdf2_sha256\$([1-9][0-9]{0,9})\$((?:[0-9a-f]{2}){16,64})\$([0-9a-f]{64})")
#: The fewest PBKDF2 iterations a configured PIN hash may use.
MIN_PIN_ITERATIONS = 200_000


class ServiceSection(Section):
    """The service menu's roles and sessions (firmware/cabinet/service/, docs/service.md)."""

    pins: dict[str, str] = Field(
        default_factory=lambda: dict(DEVELOPMENT_PIN_HASHES),
        description="role -> salted PIN hash (the development defaults must be changed)")
    session_timeout_s: int = Field(300, ge=10, le=86_400, description="an idle service session ends")
    lockout_attempts: int = Field(5, ge=1, le=100, description="wrong PINs in a row that lock a role")
    lockout_s: int = Field(60, ge=1, le=86_400, description="how long a locked role stays locked")
    demo_credits: PositiveCredits = Field(10_000, description="the demo mode's credits (memory only)")

    @field_validator("pins")
    @classmethod
    def _pin_hashes(cls, v: dict[str, str]) -> dict[str, str]:
        for role, encoded in v.items():
            if role not in SERVICE_ROLES:
                raise ValueError(f"unknown role {role!r}; roles are {', '.join(SERVICE_ROLES)}")
            match = PIN_HASH_PATTERN.fullmatch(encoded) if isinstance(encoded, str) else None
            if match is None:
                raise ValueError(f"{role}: a PIN is stored only as pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX "
                                 "(make one with egm's firmware.cabinet.service.hash_pin)")
            if int(match.group(1)) < MIN_PIN_ITERATIONS:
                raise ValueError(f"{role}: {match.group(1)} PBKDF2 iterations; at least {MIN_PIN_ITERATIONS:,}")
        return v


class TableSection(Section):
    """A live table (issue 24, docs/protocols/table.md): the controller's settings (``egm table
    serve``) and, with ``controller`` set, this terminal as one of its player stations."""

    controller: str = Field("", description="'' plays alone; HOST:PORT joins the table controller there "
                            "as a player station")
    seat: int = Field(0, ge=0, le=7, description="the station's seat at the table (0: the first free one)")
    table_id: str = Field("TABLE-1", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
    pki: str = Field("", description="PKI directory of the table's certificates; '' = the host link's")
    controller_name: str = Field("egm-table", min_length=1,
                                 description="the controller's certificate (issued/<name>)")
    listen: str = Field("127.0.0.1:7717", description="where the controller listens (HOST:PORT)")
    source: Literal["rng", "physical"] = Field(
        "rng", description="the controller's cards: the certified RNG (a virtual dealer) or the card-reading shoe")
    game: Literal[GAME_IDS] = "baccarat-war"  # type: ignore[valid-type]
    max_stations: int = Field(7, ge=1, le=7)
    betting_window_s: float = Field(15.0, ge=0.05, le=600, description="how long the betting window stays open")
    close_when_all_bet: bool = Field(True, description="close the window early once every joined station has bet")
    auto_open: bool = Field(True, description="open the next betting window by itself (a virtual dealer); "
                            "false: the dealer opens it from the dealer's screen")
    between_rounds_s: float = Field(2.0, ge=0, le=600, description="the settled round stays shown this long")
    decision_timeout_s: int = Field(30, ge=1, le=3600, description="seconds a station has to decide")
    link_timeout_s: float = Field(5.0, ge=0.1, le=600, description="a link silent this long is down")


class Config(Section):
    terminal: TerminalSection = TerminalSection()
    limits: LimitsSection = LimitsSection()
    games: GamesSection = GamesSection()
    rng: RngSection = RngSection()
    devices: DevicesSection = DevicesSection()
    host: HostSection = HostSection()
    math: MathSection = MathSection()
    money: MoneySection = MoneySection()
    cabinet: CabinetSection = CabinetSection()
    software: SoftwareSection = SoftwareSection()
    service: ServiceSection = ServiceSection()
    sas: SasSection = SasSection()
    table: TableSection = TableSection()
    update: UpdateSection = UpdateSection()
