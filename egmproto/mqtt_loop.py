"""One network loop for many MQTT connections in one process (the load test's simulator).

:class:`~egmproto.mqtt.MqttClient` normally runs a supervisor thread and, per connection, paho's
network thread: two threads per client. A simulator process of sixty terminals then has some 120
threads taking turns at the GIL for every packet. A :class:`SharedLoop` serves every client given
it (``MqttClient(..., loop=shared)``) from ONE thread, with paho's external-loop interface (its
``loop_read``/``loop_write``/``loop_misc`` and the ``on_socket_*`` callbacks): the thread waits on
a selector over every client's socket, reads and writes them, runs each client's connection
steps and timers, and sends the keepalive pings once a second.

paho's ``connect()`` blocks (TCP connect, then the TLS handshake): it runs on a small pool of
``connectors`` threads, and the connected socket is handed to the loop thread.

Contract: every paho callback of a client given a shared loop, hence every user callback
(``on_message``, ``on_connection``, ``on_delivered``), runs on the loop thread, one at a time and in
the order the events happened, as with a client of its own. A callback that blocks holds up every
client of the loop: keep them short (HostLink's only queue and wake).
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import itertools
import logging
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

log = logging.getLogger("egm.hostlink.mqtt.loop")

#: how often every connection's keepalive is looked after (paho's loop_misc)
MISC_S = 1.0


class Timer:
    """A call :meth:`SharedLoop.call_later` scheduled; :meth:`cancel` before it runs to drop it."""

    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class SharedLoop:
    """A selector thread serving the sockets of many paho clients, and a pool for their connects."""

    def __init__(self, name: str = "egm-mqtt-loop", connectors: int = 2) -> None:
        if connectors < 1:
            raise ValueError(f"a shared MQTT loop needs at least one connector thread, not {connectors}")
        self.name = name
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._calls: collections.deque[tuple[Callable[..., Any], tuple[Any, ...]]] = collections.deque()
        self._timers: list[tuple[float, int, Timer, Callable[..., Any], tuple[Any, ...]]] = []
        self._order = itertools.count()
        self._watched: dict[Any, Any] = {}          #: socket -> its paho client
        #: sockets paho said have something to write (any thread appends), written at the end of
        #: the loop's turn: most writes go out at once, without waiting for the selector
        self._dirty: collections.deque[Any] = collections.deque()
        self._writing: set[Any] = set()             #: sockets waiting to be writable (a full buffer)
        self._poked = False
        self._pool = ThreadPoolExecutor(connectors, thread_name_prefix=f"{name}-connect")
        self._closing = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # -- any thread ---------------------------------------------------------------------------------

    def in_loop(self) -> bool:
        """The calling thread is the loop thread."""
        return threading.current_thread() is self._thread

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the loop thread, after what it is doing (in the order of the calls)."""
        self._calls.append((fn, args))
        if not self.in_loop():
            self._poke()

    def call_later(self, delay: float, fn: Callable[..., Any], *args: Any) -> Timer:
        """Run ``fn(*args)`` on the loop thread in ``delay`` seconds, unless cancelled first."""
        timer = Timer()
        entry = (time.monotonic() + max(0.0, delay), next(self._order), timer, fn, args)
        if self.in_loop():
            heapq.heappush(self._timers, entry)
        else:
            self.call_soon(heapq.heappush, self._timers, entry)
        return timer

    def dial(self, connect: Callable[[], bool], then: Callable[[bool], None]) -> None:
        """Run the blocking ``connect()`` on a connector thread, then ``then(its result)`` on the loop."""

        def job() -> None:
            ok = False
            try:
                ok = connect()
            except Exception:
                log.exception("%s: a connect failed", self.name)
            self.call_soon(then, ok)

        try:
            self._pool.submit(job)
        except RuntimeError:              # the loop is closed
            self.call_soon(then, False)

    def adopt(self, client: Any) -> None:
        """Make a new paho client report its socket's needs to this loop (before its connect)."""
        client.on_socket_register_write = self._interest
        client.on_socket_unregister_write = self._interest
        client.on_socket_close = self._closed

    def close(self, timeout: float = 5.0) -> None:
        """Stop the loop thread and the connectors (the clients should be stopped first)."""
        self._closing = True
        self._poke()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if not self.in_loop():
            self._thread.join(timeout)

    @property
    def watched(self) -> int:
        """How many sockets the loop is serving."""
        return len(self._watched)

    def _poke(self) -> None:
        if self._poked:
            return                        # the loop is woken already
        self._poked = True
        with contextlib.suppress(OSError):   # already poked (the buffer is full), or closed
            self._wake_w.send(b"\0")

    # -- the loop thread ----------------------------------------------------------------------------

    def watch(self, client: Any) -> None:
        """Serve a connected paho client's socket (loop thread)."""
        sock = client.socket()
        if sock is None:
            return
        self._watched[sock] = client
        self._sel.register(sock, selectors.EVENT_READ, client)
        self._dirty.append(sock)                  # its CONNECT

    def unwatch(self, sock: Any) -> None:
        """Stop serving a socket (loop thread); it may already be closed."""
        self._writing.discard(sock)
        if self._watched.pop(sock, None) is not None:
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(sock)

    def _interest(self, client: Any, _userdata: Any, sock: Any) -> None:
        """paho: the socket has (or no longer has) something to write. Any thread."""
        self._dirty.append(sock)
        if not self.in_loop():
            self._poke()

    def _flush(self) -> None:
        """Write what paho queued on the sockets said to have something to write."""
        for _ in range(len(self._dirty)):
            sock = self._dirty.popleft()
            client = self._watched.get(sock)
            if client is None or sock in self._writing:
                continue                          # gone, or written when the selector says so
            if client.want_write():
                self._guarded(client.loop_write)
            self._wait_writable(sock, client)

    def _wait_writable(self, sock: Any, client: Any) -> None:
        """Ask the selector for writability while paho has something it could not write."""
        if client.socket() is not sock or sock not in self._watched:
            return                                # closed meanwhile
        want = client.want_write()
        if want != (sock in self._writing):
            (self._writing.add if want else self._writing.discard)(sock)
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if want else 0)
            self._sel.modify(sock, events, client)

    def _closed(self, _client: Any, _userdata: Any, sock: Any) -> None:
        """paho is closing the socket: unregister it first (its number may be reused at once)."""
        if self.in_loop():
            self.unwatch(sock)
        else:                             # a connect that failed on a connector: never watched
            self.call_soon(self.unwatch, sock)

    def _run(self) -> None:
        next_misc = time.monotonic() + MISC_S
        while not self._closing:
            now = time.monotonic()
            timeout = min(next_misc, self._timers[0][0] if self._timers else next_misc) - now
            for key, mask in self._sel.select(0 if self._calls or self._dirty else max(0.0, timeout)):
                if key.data is None:
                    self._drain_wake()
                else:
                    self._serve(key.fileobj, key.data, mask)
            while self._calls:
                fn, args = self._calls.popleft()
                self._guarded(fn, *args)
            now = time.monotonic()
            while self._timers and self._timers[0][0] <= now:
                _, _, timer, fn, args = heapq.heappop(self._timers)
                if not timer.cancelled:
                    self._guarded(fn, *args)
            self._flush()
            if now >= next_misc:
                next_misc = now + MISC_S
                for client in list(self._watched.values()):
                    self._guarded(client.loop_misc)
        self._sel.close()
        self._wake_r.close()
        self._wake_w.close()
        log.debug("%s: stopped", self.name)

    def _serve(self, sock: Any, client: Any, mask: int) -> None:
        if mask & selectors.EVENT_READ:
            self._guarded(client.loop_read)
            # TLS: paho reads a packet at a time; what the TLS layer already decrypted raises no
            # readable event on the socket, so it is read now
            while isinstance(sock, ssl.SSLSocket) and client.socket() is sock and sock.pending():
                self._guarded(client.loop_read)
        if mask & selectors.EVENT_WRITE and client.socket() is sock:
            self._guarded(client.loop_write)
            self._wait_writable(sock, client)

    def _drain_wake(self) -> None:
        self._poked = False
        with contextlib.suppress(OSError):
            while self._wake_r.recv(4096):
                pass

    def _guarded(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("%s: error in the shared MQTT loop", self.name)
