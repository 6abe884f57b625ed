"""Rounds: the game and bet chosen, a round started, dealt card by card, decided and completed.

A round is requested (:meth:`Rounds.play`, checked at once) and deals on the terminal's next step;
every card is a safe point (:class:`~firmware.cabinet.gated.GatedSource`), where the terminal
handles its inputs and waits while the cabinet cannot play, so a tilt stops the round at its next
card and it continues where it stopped when the last tilt clears. A round a power loss (or a fault
mid-deal) interrupted is resumed from its journal. The player's decision time does not run while
play is stopped (:class:`DecisionClock`).

:class:`Rounds` owns the round kernels and card sources by game, the round in progress, what the
terminal's thread is doing with it (:class:`RoundActivity`, moved only by the rows of
:data:`ACTIVITY_TABLE`), the game and bet chosen and the last
round's record. It drives the cabinet's round triggers, raises a fault's tilt through
:class:`~firmware.cabinet.supervision.Supervision` and pumps the terminal's inputs at its safe points.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from firmware.cabinet.errors import TerminalError, TerminalStopped
from firmware.cabinet.gated import GatedSource
from firmware.cabinet.states import CabinetState
from firmware.cards.source import PhysicalShoeSource, RngShoe
from firmware.errors import EgmError
from firmware.games.registry import configured_options, get_game
from firmware.kernel.limits import BetLimits, validate_wagers
from firmware.kernel.machine import TableMachine
from firmware.kernel.round import RoundKernel
from firmware.kernel.states import RoundState
from firmware.kernel.table import Row, StateTable
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.resume import resume_round

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

S = CabinetState


class RoundActivity(enum.Enum):
    """What the terminal's thread is doing about a round (the round itself is the kernel's phase)."""

    IDLE = "idle"              #: nothing asked: the terminal's step may start or continue a round
    STARTING = "starting"      #: a round was requested and deals on the next step
    IN_KERNEL = "in_kernel"    #: inside the kernel (dealing, deciding, resuming): a step must not re-enter


A = RoundActivity

#: The rounds' machine (``egm diagram rounds``). A request waits for the next step, which takes its
#: wagers (``begin``) before it enters the kernel; the kernel is entered only from IDLE, and entered
#: once: a decision that times the others out goes on inside the same entry.
ACTIVITY_TABLE = StateTable("rounds", RoundActivity, A.IDLE, (
    Row("request", (A.IDLE,), A.STARTING),
    Row("begin", (A.STARTING,), A.IDLE),
    Row("enter_kernel", (A.IDLE,), A.IN_KERNEL),
    Row("leave_kernel", (A.IN_KERNEL,), A.IDLE),
))


class DecisionClock:
    """The player's decision time, held while play is stopped (a tilt, the key): the deadline moves
    on by the time the round was interrupted."""

    def __init__(self, clock: Any) -> None:
        self._clock = clock
        self.held_since: float | None = None    #: when play stopped while decisions were open

    def follow(self, kernel: RoundKernel, can_continue: bool) -> None:
        """Hold the clock while play cannot continue; move the deadline on when it can again."""
        now = self._clock()
        if not can_continue:
            if self.held_since is None:
                self.held_since = now
        elif self.held_since is not None:
            if kernel.decisions_deadline is not None:
                kernel.decisions_deadline += now - self.held_since
            self.held_since = None

    def time_left(self, kernel: RoundKernel) -> float | None:
        """Seconds before the open decisions take their defaults (None: no decision awaited, or
        no time limit); frozen while the clock is held."""
        deadline = kernel.decisions_deadline
        if deadline is None or kernel.phase is not RoundState.DECISIONS:
            return None
        now = self.held_since if self.held_since is not None else self._clock()
        return round(max(0.0, deadline - now), 1)

    def reset(self) -> None:
        self.held_since = None


class Rounds:
    """The rounds of ``terminal``."""

    def __init__(self, terminal: Terminal, physical_shoe_timeout: float) -> None:
        self.t = terminal
        cfg = terminal.cfg
        self.limits = BetLimits.from_config(cfg.limits)
        self.game_id: str = cfg.games.default
        self.seats: int = cfg.games.seats
        self.bet_unit = max(self.limits.min_bet, min(10, self.limits.max_bet))
        self._kernels: dict[str, RoundKernel] = {}
        self._sources: dict[str, Any] = {}
        self.kernel: RoundKernel | None = None          #: the kernel of the round in progress
        self.last_record: dict[str, Any] | None = None
        self.rounds_played = 0
        self._activity = TableMachine(ACTIVITY_TABLE)
        self._wagers: dict[int, dict[str, int]] | None = None   #: the round STARTING deals these
        self.decision_clock = DecisionClock(terminal.clock)
        self._physical_timeout = physical_shoe_timeout

    @property
    def activity(self) -> RoundActivity:
        activity: RoundActivity = self._activity.state
        return activity

    @property
    def starting(self) -> bool:
        return self.activity is A.STARTING

    @contextlib.contextmanager
    def _in_kernel(self) -> Iterator[None]:
        """Inside the kernel until the outermost entry ends (a decision goes on to time out the
        others, :meth:`go_on`, inside its own entry)."""
        if self.activity is A.IN_KERNEL:
            yield
            return
        self._activity.fire("enter_kernel")
        try:
            yield
        finally:
            self._activity.fire("leave_kernel")

    # --- the game, the bet, the kernels -----------------------------------------------------------
    def choose_game(self, game: str) -> dict[str, Any]:
        cfg = self.t.cfg
        if game not in cfg.games.enabled:
            raise TerminalError(f"game {game!r} is not enabled; enabled: {', '.join(cfg.games.enabled)}")
        if self.kernel is not None or self.t.ledger.table_bets:
            raise TerminalError("a round is in progress")
        if game != self.game_id:
            self.t.ledger.event("game_selected", game=game)        # SAS 0x8C: in history first
        self.game_id = game
        return self.t.status()

    def use_config(self, games: list[str]) -> None:
        """``games`` changed options: their kernels and shoes are built again (a round in progress
        keeps the kernel it started with)."""
        for game in games:
            self._kernels.pop(game, None)
            self._sources.pop(game, None)              # the shoe's composition may have changed

    def set_bet(self, unit: int) -> dict[str, Any]:
        if not isinstance(unit, int) or not self.limits.min_bet <= unit <= self.limits.max_bet:
            raise TerminalError(f"a bet is {self.limits.min_bet}..{self.limits.max_bet} credits, not {unit!r}")
        self.bet_unit = unit
        return self.t.status()

    def next_bet(self) -> dict[str, Any]:
        """The BET button: one more step of the minimum bet, back to the minimum after the maximum."""
        limits = self.limits
        return self.set_bet(self.bet_unit + limits.min_bet if self.bet_unit < limits.max_bet else limits.min_bet)

    def kernel_for(self, game_id: str) -> RoundKernel:
        """The round kernel of ``game_id`` (built once, with the configured options)."""
        kernel = self._kernels.get(game_id)
        if kernel is None:
            t = self.t
            game = get_game(game_id)
            options = configured_options(t.cfg, game_id)
            kernel = RoundKernel(game, options, limits=self.limits, journal=t.ledger,
                                 decision_timeout_s=t.cfg.games.decision_timeout_s, clock=t.clock)
            self._kernels[game_id] = kernel
        return kernel

    def source(self, kernel: RoundKernel) -> Any:
        """The card source of ``kernel``'s game (the physical shoe, else an RNG shoe), gated."""
        key = kernel.game.id
        source = self._sources.get(key)
        if source is None:
            shoe = self.t.devices.shoe
            if shoe is not None:
                source = PhysicalShoeSource(shoe, timeout=self._physical_timeout)
            else:
                source = RngShoe(self.t.rng, kernel.game.shoe(kernel.options))
            self._sources[key] = source
        return GatedSource(source, self.safe_point)

    def new_rng(self) -> None:
        """The RNG was instantiated again: every RNG shoe draws from the new instance."""
        self._sources.clear()

    def wagers_for(self, game_id: str | None = None) -> dict[int, dict[str, int]]:
        kernel = self.kernel_for(game_id or self.game_id)
        return kernel.game.automatic_wagers(kernel.options, self.seats, self.bet_unit)

    # --- a round ----------------------------------------------------------------------------------
    def play(self, wagers: Mapping[Any, Mapping[str, int]] | None = None, game: str | None = None) -> dict[str, Any]:
        """Start a round (the DEAL button): ``wagers`` by seat, else the automatic wagers at the
        current bet. The request is checked now and the deal starts on the terminal's next step,
        so the caller gets its answer at once; the round runs on (it may wait for cards or
        decisions) and ``status()["round"]`` follows it."""
        t = self.t
        if game is not None:
            self.choose_game(game)
        if not t.cabinet.can_start_round or self.activity is not A.IDLE:
            raise TerminalError(f"a round cannot start now ({t.cabinet.state.name.lower()})")
        if (held := t.play_held()) is not None:
            raise TerminalError(f"a round cannot start now ({held})")
        kernel = self.kernel_for(self.game_id)
        try:
            chosen = {int(s): {str(n): a for n, a in b.items()} for s, b in (wagers or self.wagers_for()).items()}
        except (AttributeError, ValueError) as exc:
            raise TerminalError(f"wagers are {{seat: {{name: credits}}}}: {exc}") from None
        validate_wagers(kernel.game, kernel.options, chosen, self.limits, t.ledger.credits)
        stake = sum(sum(b.values()) for b in chosen.values()) + kernel.game.reserved_stake(kernel.options, chosen)
        if stake > t.ledger.credits:
            raise TerminalError(f"not enough credits: the round needs {stake}, the meter holds {t.ledger.credits}")
        self._activity.fire("request")
        self._wagers = chosen
        t.message = ""
        return {**t.status(), "starting": True}

    def step(self) -> None:
        """The terminal's step, outside the kernel: deal the round requested, go on with the open one."""
        if self.activity is A.IN_KERNEL:
            return
        if self.activity is A.STARTING:
            self._begin()
        self.go_on()
        if self.t.table is not None:
            self.t.table.attach()                 # a station: PLAYING exactly while a table bet is open

    def _begin(self) -> None:
        t = self.t
        self._activity.fire("begin")
        chosen, self._wagers = self._wagers, None
        if chosen is None or not t.cabinet.can_start_round or t.play_held() is not None:
            return
        kernel = self.kernel_for(self.game_id)
        dice = kernel.game.roll_dice(t.rng) if kernel.game.dice else None
        t.cabinet.start_round()
        self.kernel = kernel
        try:
            with self._in_kernel():
                kernel.begin(chosen, self.source(kernel), credits=t.ledger.credits, dice=dice)
        except CriticalMemoryError:
            raise
        except EgmError as exc:
            self.kernel = None
            self._kernels.pop(kernel.game.id, None)      # its machine stopped mid-round: a new one
            if kernel.phase is RoundState.BETTING:       # refused before anything was journaled
                t.cabinet.complete_round()
                t.supervision.after_transition()
            # Otherwise the journal holds the round (its stake is taken): it is resumed from the
            # journal, with the cards it has, as soon as play can continue (the tilt cleared).
            t.supervision.round_fault(exc)
            t.message = f"the round stopped: {exc}"
            return
        self.go_on()

    def decide(self, seat: int, action: str) -> dict[str, Any]:
        t = self.t
        kernel = self.kernel
        if kernel is None or kernel.phase is not RoundState.DECISIONS:
            raise TerminalError("no decision is awaited")
        if not t.cabinet.can_continue_round:
            raise TerminalError(f"play is stopped ({t.cabinet.state.name.lower()})")
        with self._in_kernel():
            kernel.decide(int(seat), action)
            self.go_on()
        return t.status()

    def go_on(self) -> None:
        """After a step of the round: time out decisions; complete a finished round (or resume the
        journaled one when there is no kernel)."""
        t = self.t
        kernel = self.kernel
        if kernel is None:
            if t.ledger.open_round is not None and t.cabinet.state in (S.IDLE, S.PLAYING):
                self.resume()
            return
        if kernel.phase is RoundState.DECISIONS:
            self.decision_clock.follow(kernel, t.cabinet.can_continue_round)
            if t.cabinet.can_continue_round:
                with self._in_kernel():
                    kernel.expire()
            if kernel.phase is RoundState.DECISIONS:
                return
        if kernel.phase is RoundState.COMPLETE and t.cabinet.can_continue_round:
            record = kernel.record()
            self.kernel = None
            self.decision_clock.reset()
            self.last_record = record
            self.rounds_played += 1
            t.cabinet.complete_round()
            if t.on_round is not None:
                t.on_round(record)
            t.supervision.after_transition()

    def resume(self) -> None:
        """Finish the round a power loss (or a fault mid-deal) interrupted, from its journal: the
        journaled cards again, then live cards (the RNG's from the rest of the shoe, or the
        physical shoe's next ones)."""
        t = self.t
        if t.cabinet.state is S.IDLE:
            t.cabinet.start_round()
        shoe = t.devices.shoe
        open_round = t.ledger.open_round
        assert open_round is not None
        physical = open_round.resume_data()["source"] == "physical"
        continuation = PhysicalShoeSource(shoe, timeout=self._physical_timeout) if physical and shoe else None
        try:
            with self._in_kernel():
                kernel = resume_round(t.ledger, t.rng, decider=None, continuation=continuation)
        except CriticalMemoryError:
            raise
        except EgmError as exc:
            t.supervision.round_fault(exc)
            t.message = f"the round stopped: {exc}"
            return
        assert kernel is not None
        t.ledger.event("round_resumed", round_id=kernel.round_id)
        self.kernel = kernel
        self.go_on()

    def settle_after_power_loss(self) -> None:
        """An interrupted round finishes once the cabinet can play."""
        if self.t.ledger.open_round is not None and self.t.cabinet.state is S.IDLE:
            self.resume()

    def safe_point(self) -> None:
        """Before every card: pace, handle inputs, and wait while the cabinet cannot play."""
        t = self.t
        delay = t.cfg.cabinet.card_delay_ms / 1000
        deadline = t.clock() + delay
        t.pump(0)
        while True:
            if t.stopping:
                raise TerminalStopped("the terminal is stopping")
            if t.cabinet.can_continue_round and t.clock() >= deadline and self._card_ready():
                return
            t.pump(0.02)

    def _card_ready(self) -> bool:
        shoe = self.t.devices.shoe
        if shoe is None:
            return True
        return bool(shoe.queued) or not shoe.is_open

    def deal_button(self) -> None:
        """The DEAL and REPEAT buttons: a round at the current bet, when one can start."""
        if self.kernel is None and self.t.cabinet.can_start_round:
            self.t.play()
