"""amqtt's broker, made to deliver every QoS 1 message it acknowledges (at least once).

amqtt 0.12.1 acknowledges a PUBLISH (PUBACK) as soon as the message sits in the publisher's session
queue, then loses it in several ways (found with ``tests/hostlink/broker_load.py``; figures in
``docs/protocols/host-transport.md``):

1. the publisher's queue: a message acknowledged but not yet taken from the publisher's queue when
   the publisher disconnects is never broadcast (the queue is dropped with the session);
2. ``Broker._run_broadcast`` iterates the subscription table across ``await`` points: a client
   subscribing meanwhile raises ``RuntimeError: dictionary changed size during iteration`` and the
   message is lost for every subscription not yet served (an unsubscription skips one);
3. each delivery to a subscriber waits 5 s for the PUBACK, then gives the message up ("Timeout
   waiting for PUBACK"), and a delivery cut by a disconnection is dropped from the session too, so
   nothing is re-sent when the subscriber reconnects, contrary to MQTT 3.1.1 section 4.4
   [MQTT-4.4.0-1];
4. a message published while the subscriber's connection is already dead but not yet noticed goes
   to that connection and times out (3.).

:class:`ReliableBroker` keeps amqtt's protocol handling and replaces its QoS 1 delivery: every
session has a :class:`Mailbox`; a broadcast puts the message into the mailbox of every matching
subscription (of a connected session, or of a persistent one while it is away) and a per-connection
task sends from it, at most :data:`MAX_INFLIGHT` messages awaiting their PUBACK. A message leaves
the mailbox only on its PUBACK; on reconnection the unacknowledged ones are sent again first, with
their packet identifiers and the DUP flag. What a publisher's connection acknowledged and left in
its queue is broadcast when that connection ends. Subscriptions are granted at QoS 0 or 1 and
retained messages are not kept (the product uses neither QoS 2 nor retained messages).

The broker's sessions live in memory: a broker stopped (or its process ended) loses what it held.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from amqtt.broker import Broker
from amqtt.contexts import Action
from amqtt.mqtt.constants import QOS_0, QOS_1
from amqtt.mqtt.protocol.broker_handler import BrokerProtocolHandler
from amqtt.mqtt.publish import PublishPacket
from amqtt.session import Session

log = logging.getLogger("egm.hostlink.broker")

#: Messages sent to one client and not yet acknowledged, at most (Mosquitto's default is 20).
MAX_INFLIGHT = 100
#: A warning each time a mailbox grows by this many waiting messages (a subscriber away or slow).
BACKLOG_WARNING = 10_000
_MAILBOX = "egm.mailbox"  # Session.attributes key
_MAX_PACKET_ID = 65535


@dataclass
class _Outgoing:
    topic: str
    data: bytes
    packet_id: int = 0


class Mailbox:
    """One session's QoS 1 messages: waiting to be sent, then in flight until the client's PUBACK."""

    def __init__(self) -> None:
        self.waiting: collections.deque[_Outgoing] = collections.deque()
        self.inflight: collections.OrderedDict[int, _Outgoing] = collections.OrderedDict()
        self.changed = asyncio.Event()
        self.owner: BrokerProtocolHandler | None = None   # the connection sending from it now
        self._last_id = 0

    def __len__(self) -> int:
        return len(self.waiting) + len(self.inflight)

    def put(self, topic: str, data: bytes, client_id: str | None) -> None:
        self.waiting.append(_Outgoing(topic, bytes(data)))
        if len(self.waiting) % BACKLOG_WARNING == 0:
            log.warning("embedded MQTT broker: %d messages wait for client %s", len(self.waiting), client_id)
        self.changed.set()

    def next_packet_id(self, session: Session) -> int:
        """A packet identifier not in use by this session in either direction."""
        for _ in range(_MAX_PACKET_ID):
            self._last_id = self._last_id % _MAX_PACKET_ID + 1
            if not (self._last_id in self.inflight or self._last_id in session.inflight_out
                    or self._last_id in session.inflight_in):
                return self._last_id
        raise RuntimeError("no free MQTT packet identifier")  # MAX_INFLIGHT makes this unreachable

    def acknowledged(self, message: _Outgoing, waiter: asyncio.Future[object]) -> None:
        """The PUBACK waiter of ``message`` ended: a PUBACK removes it; a cancelled wait keeps it."""
        if waiter.cancelled() or waiter.exception() is not None:
            return
        if self.inflight.get(message.packet_id) is message:
            del self.inflight[message.packet_id]
            self.changed.set()


def mailbox(session: Session) -> Mailbox:
    """The session's mailbox (created on first use; it lives and dies with the session)."""
    box: Mailbox | None = session.attributes.get(_MAILBOX)
    if box is None:
        box = session.attributes[_MAILBOX] = Mailbox()
    return box


class _SnapshotDict(dict[str, Any]):
    """A dict whose iteration walks a copy: amqtt iterates its subscription table across awaits."""

    def __iter__(self) -> Iterator[str]:
        return iter(list(super().keys()))

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return list(super().items())


class ReliableBroker(Broker):
    """amqtt's :class:`~amqtt.broker.Broker` with the QoS 1 delivery of the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._subscriptions = _SnapshotDict()

    # -- subscriptions and retained messages --------------------------------------------------------

    async def add_subscription(self, subscription: tuple[str, int], session: Session) -> int:
        topic_filter, qos = subscription
        granted: int = await super().add_subscription((topic_filter, min(qos, QOS_1)), session)
        return granted

    async def retain_message(self, source_session: Session | None, topic_name: str | None,
                             data: bytes | bytearray | None, qos: int | None = None) -> None:
        log.debug("embedded MQTT broker: retained message on %s not kept", topic_name)

    # -- publishers: what was acknowledged is broadcast ---------------------------------------------

    async def _client_message_loop(self, client_session: Session, handler: BrokerProtocolHandler) -> None:
        sender = asyncio.create_task(self._send_mailbox(client_session, handler))
        try:
            await super()._client_message_loop(client_session, handler)
        finally:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
            await self._broadcast_acknowledged(client_session, handler)

    async def _delete_session(self, client_id: str) -> None:
        await self._broadcast_acknowledged_of(client_id)
        await super()._delete_session(client_id)

    async def _cleanup_session(self, client_id: str) -> None:
        await self._broadcast_acknowledged_of(client_id)
        await super()._cleanup_session(client_id)

    async def _broadcast_acknowledged_of(self, client_id: str) -> None:
        session, handler = self._sessions.get(client_id, (None, None))
        if session is not None and handler is not None:
            await self._broadcast_acknowledged(session, handler)

    async def _broadcast_acknowledged(self, session: Session, handler: BrokerProtocolHandler) -> None:
        """Broadcast what the client published and the broker acknowledged but did not handle yet.

        The queue is emptied at once, before the first ``await``: amqtt clears a session's queue
        when it deletes the session, which may happen meanwhile (a clean session that ended)."""
        queue = session.delivered_message_queue
        acknowledged = [queue.get_nowait() for _ in range(queue.qsize())]
        for message in acknowledged:
            done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
            done.set_result(message)
            try:
                await self._handle_message_delivery(session, handler, done)
            except Exception:
                log.exception("embedded MQTT broker: cannot broadcast a message of %s", session.client_id)

    # -- subscribers: every matching subscription gets the message ----------------------------------

    async def _run_broadcast(self, running_tasks: collections.deque[asyncio.Task[object]]) -> None:
        broadcast = await self._broadcast_queue.get()
        topic = broadcast["topic"]
        for topic_filter, subscriptions in self._subscriptions.items():
            if not self._matches(topic, topic_filter):
                continue
            for target, sub_qos in list(subscriptions):
                try:
                    await self._deliver(broadcast, target, sub_qos, running_tasks)
                except Exception:
                    log.exception("embedded MQTT broker: cannot deliver a message on %s to %s",
                                  topic, target.client_id)

    async def _deliver(self, broadcast: dict[str, Any], target: Session, sub_qos: int,
                       running_tasks: collections.deque[asyncio.Task[object]]) -> None:
        topic, data = broadcast["topic"], broadcast["data"]
        if not await self._topic_filtering(target, topic=topic, action=Action.RECEIVE):
            return
        connected = target.transitions.state == "connected"
        if min(broadcast.get("qos", sub_qos), QOS_1) == QOS_0:
            handler = self._get_handler(target)
            if connected and handler is not None:
                running_tasks.append(asyncio.ensure_future(handler.mqtt_publish(topic, data, QOS_0, retain=False)))
            return
        if connected or not (target.clean_session or target.is_anonymous):
            mailbox(target).put(topic, data, target.client_id)

    async def _send_mailbox(self, session: Session, handler: BrokerProtocolHandler) -> None:
        """Send the session's mailbox on this connection until it ends: first the messages sent before
        and not acknowledged (same packet identifier, DUP set), then the waiting ones in order."""
        box = mailbox(session)
        box.owner = handler
        box.changed.set()  # a sender of an older connection wakes up and sees it is no longer the owner
        try:
            for message in list(box.inflight.values()):
                if box.owner is not handler:
                    return
                await self._send(box, handler, message, dup=True)
            while box.owner is handler:
                if not box.waiting or len(box.inflight) >= MAX_INFLIGHT:
                    box.changed.clear()
                    await box.changed.wait()
                    continue
                message = box.waiting.popleft()
                message.packet_id = box.next_packet_id(session)
                box.inflight[message.packet_id] = message
                await self._send(box, handler, message, dup=False)
        except Exception as exc:  # the connection failed under us: its messages wait for the next one
            log.debug("embedded MQTT broker: delivery to %s stopped: %r", session.client_id, exc)
        finally:
            if box.owner is handler:
                box.owner = None

    @staticmethod
    async def _send(box: Mailbox, handler: BrokerProtocolHandler, message: _Outgoing, *, dup: bool) -> None:
        waiter: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        waiter.add_done_callback(lambda w: box.acknowledged(message, w))
        handler._puback_waiters[message.packet_id] = waiter  # amqtt resolves it on the PUBACK
        packet = PublishPacket.build(message.topic, message.data, message.packet_id, dup, QOS_1, False)
        await handler._send_packet(packet)
