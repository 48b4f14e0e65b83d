#!/usr/bin/env python3
"""A ReactorBus client in Python, written from docs/PROTOCOL.md alone.

It speaks wire protocol version 1 with pyzmq and msgpack:

    python3 reactorbus_client.py --actions tcp://127.0.0.1:7001 --feed tcp://127.0.0.1:7003 \
        send --repeat 100 '{"countUp": {}}' '{"countUpAsync": {}}'
    python3 reactorbus_client.py --actions ... --feed ... snapshot
    python3 reactorbus_client.py --actions ... --feed ... follow --until 'count=200' --timeout 30

`send` pipelines the actions (a window of unacked ones), resends after a timeout with the same
(client_id, client_seq) and exits 0 only when every action was acked; it first asks for batched
acks (`features` naming `acks`), so the acks of one turn of the authority arrive as one `acks`
message, and reads single `ack`s as well (from an authority that predates batching). `follow` fetches the current
snapshot, then applies feed snapshots with higher versions (the Clone pattern), printing one
JSON line per snapshot, until the state matches `--until` (a top-level field equal to a number).
Logs go to stderr, data to stdout.
"""

import argparse
import json
import sys
import time
import uuid

import msgpack
import zmq

VERSION = 1


def log(message):
    print(f"reactorbus_client: {message}", file=sys.stderr, flush=True)


class Client:
    """Sends actions to the authority's actions socket (a DEALER to its ROUTER)."""

    def __init__(self, context, actions_endpoint, timeout=5.0, retries=3):
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(actions_endpoint)
        self.client_id = f"py-{uuid.uuid4()}"
        self.next_seq = 1
        self.next_request = 1
        self.timeout = timeout
        self.retries = retries
        self.features_request = None  # the request id of the `features` request, until answered

    def _send_action(self, seq, payload):
        header = msgpack.packb([VERSION, "action", self.client_id, seq])
        self.socket.send_multipart([header, payload])

    def _receive(self, wait_seconds):
        if not self.socket.poll(int(wait_seconds * 1000)):
            return None
        frames = self.socket.recv_multipart()
        return msgpack.unpackb(frames[0], raw=False), frames[1:]

    def send_all(self, actions, window=100):
        """Sends every action (already msgpack-encoded); returns the acks by client_seq."""
        pending = {}  # client_seq -> (payload, deadline, attempts)
        acks = {}
        if self.features_request is None:
            # Once per connection: the acks of one turn then come as one `acks` message.
            self.features_request = self.next_request
            self.next_request += 1
            self.socket.send_multipart([msgpack.packb([VERSION, "features", self.features_request, ["acks"]])])
        queue = list(actions)
        position = 0
        while position < len(queue) or pending:
            while position < len(queue) and len(pending) < window:
                seq = self.next_seq
                self.next_seq += 1
                self._send_action(seq, queue[position])
                pending[seq] = (queue[position], time.monotonic() + self.timeout, 1)
                position += 1
            message = self._receive(0.05)
            if message is not None:
                header, rest = message
                kind = header[1]
                if kind == "ack":
                    answered = [header[2:5]]
                elif kind == "acks":
                    answered = msgpack.unpackb(rest[0], raw=False)  # [[client_seq, action_seq, version], ...]
                else:
                    answered = []
                for seq, action_seq, version in answered:
                    if seq in pending:
                        del pending[seq]
                        acks[seq] = (action_seq, version)
                if kind == "error" and header[2] == self.features_request:
                    pass  # an authority before batched acks (unknown_kind): it sends an `ack` per action
                elif kind == "error":
                    raise RuntimeError(f"authority refused client_seq {header[2]}: {header[3]}: {header[4]}")
            now = time.monotonic()
            for seq, (payload, deadline, attempts) in list(pending.items()):
                if now < deadline:
                    continue
                if attempts > self.retries:
                    raise TimeoutError(f"no ack for client_seq {seq} after {attempts} attempts")
                self._send_action(seq, payload)  # same (client_id, client_seq): idempotent
                pending[seq] = (payload, now + self.timeout, attempts + 1)
        return acks

    def snapshot(self):
        """Returns (version, action_seq, app, state) from the authority."""
        request = self.next_request
        self.next_request += 1
        self.socket.send_multipart([msgpack.packb([VERSION, "snapshot", request])])
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            message = self._receive(deadline - time.monotonic())
            if message is None:
                break
            header, rest = message
            if header[1] == "snapshot" and header[2] == request:
                return header[3], header[4], header[5], msgpack.unpackb(rest[0], raw=False, strict_map_key=False)
        raise TimeoutError("no snapshot from the authority")


class Follower:
    """Follows the feed (a SUB socket) the way PROTOCOL.md describes."""

    def __init__(self, context, feed_endpoint, client):
        self.socket = context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVHWM, 1000)
        self.socket.connect(feed_endpoint)
        self.socket.setsockopt(zmq.SUBSCRIBE, b"snapshot")
        self.socket.setsockopt(zmq.SUBSCRIBE, b"heartbeat")
        self.client = client
        self.version = None
        self.state = None

    def follow(self, until, timeout):
        """Yields (version, state) for each newer snapshot until `until(state)` or the timeout."""
        # Subscribe first (done above), then fetch the current snapshot, then apply newer ones.
        self.version, _, _, self.state = self.client.snapshot()
        yield self.version, self.state
        deadline = time.monotonic() + timeout
        while not until(self.state):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"state did not reach the goal; last version {self.version}: {self.state}")
            if not self.socket.poll(int(min(remaining, 1.0) * 1000)):
                continue
            frames = self.socket.recv_multipart()
            topic = frames[0]
            header = msgpack.unpackb(frames[1], raw=False)
            if header[0] != VERSION:
                continue
            version = header[1]
            if topic == b"snapshot" and version > self.version:
                self.version = version
                self.state = msgpack.unpackb(frames[2], raw=False, strict_map_key=False)
                yield self.version, self.state
            elif topic == b"heartbeat" and version > self.version:
                # We missed something: ask for the current snapshot again.
                self.version, _, _, self.state = self.client.snapshot()
                yield self.version, self.state


def parse_goal(text):
    if not text:
        return lambda state: False
    field, _, value = text.partition("=")
    goal = int(value)
    return lambda state: isinstance(state, dict) and state.get(field) == goal


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--actions", required=True, help="the authority's actions endpoint")
    parser.add_argument("--feed", required=True, help="the authority's feed endpoint")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per request attempt")
    commands = parser.add_subparsers(dest="command", required=True)
    send = commands.add_parser("send", help="send actions typed as JSON")
    send.add_argument("--repeat", type=int, default=1)
    send.add_argument("--window", type=int, default=100)
    send.add_argument("action_json", nargs="+", metavar="ACTION_JSON")
    commands.add_parser("snapshot", help="print the current snapshot as JSON")
    follow = commands.add_parser("follow", help="print snapshots as JSON lines until a goal")
    follow.add_argument("--until", default="", help="stop when FIELD=NUMBER holds, e.g. count=200")
    follow.add_argument("--for", dest="duration", type=float, default=30.0, help="give up after this many seconds")
    arguments = parser.parse_args()

    context = zmq.Context()
    try:
        client = Client(context, arguments.actions, timeout=arguments.timeout)
        if arguments.command == "send":
            payloads = [msgpack.packb(json.loads(text)) for text in arguments.action_json] * arguments.repeat
            acks = client.send_all(payloads, window=arguments.window)
            last = max(acks.values()) if acks else (0, 0)
            print(json.dumps({"sent": len(payloads), "acked": len(acks), "last_action_seq": last[0]}), flush=True)
            return 0 if len(acks) == len(payloads) else 1
        if arguments.command == "snapshot":
            version, action_seq, app, state = client.snapshot()
            print(json.dumps({"version": version, "action_seq": action_seq, "app": app, "state": state}), flush=True)
            return 0
        follower = Follower(context, arguments.feed, client)
        for version, state in follower.follow(parse_goal(arguments.until), arguments.duration):
            print(json.dumps({"version": version, "state": state}), flush=True)
        return 0
    except (TimeoutError, RuntimeError) as error:
        log(str(error))
        return 1
    finally:
        context.destroy(linger=0)


if __name__ == "__main__":
    sys.exit(main())
