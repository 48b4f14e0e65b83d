#!/usr/bin/env python3
"""A straightforward ReactorBus authority for the counter app, in Python, from docs/PROTOCOL.md.

It is the baseline `reactor-bench` compares the Swift authority with: the same protocol
and the same batching (read what is waiting, apply it, then publish one snapshot), written the
obvious way with pyzmq and msgpack, without workers, a journal or CURVE.

    python3 baseline_authority.py --actions tcp://127.0.0.1:* --feed tcp://127.0.0.1:*

prints the bound endpoints as one JSON line, like `reactor-node authority`, then serves:

- actions socket (ROUTER): `action` (`countUp` is applied, acked with action_seq and version;
  a resent (client_id, client_seq) is acked again, not applied again), `snapshot`, `ping`,
  `stats`, `features` (a connection that names `acks` gets the acks a batch owes it as `acks`
  messages of at most 146, a single one as an `ack`, ahead of any other reply to it, as the Swift
  authority does); anything else is answered with `error`;
- feed (PUB): one `snapshot` after each batch that changed the state, and a `heartbeat` at
  least once a second when idle.

SIGINT/SIGTERM stop it. Logs go to stderr.
"""

import argparse
import json
import signal
import sys
import time

import msgpack
import zmq

VERSION = 1
APP = "counter"
REMEMBERED = 4096  # client_seq remembered per client, as docs/PROTOCOL.md says
MAX_ACKS = 146  # acks per `acks` message at most, as the Swift authority sends (4 KiB bodies)


class Authority:
    def __init__(self, context, actions_endpoint, feed_endpoint, batch):
        self.actions = context.socket(zmq.ROUTER)
        self.actions.setsockopt(zmq.LINGER, 0)
        self.actions.setsockopt(zmq.RCVHWM, 100000)
        self.actions.setsockopt(zmq.SNDHWM, 100000)
        self.actions.bind(actions_endpoint)
        self.feed = context.socket(zmq.PUB)
        self.feed.setsockopt(zmq.LINGER, 0)
        self.feed.setsockopt(zmq.SNDHWM, 10000)
        self.feed.bind(feed_endpoint)
        self.batch = batch
        self.state = {"count": 0}
        self.version = 0
        self.action_seq = 0
        self.clients = {}  # client_id -> {client_seq: (action_seq, version)}
        self.counters = {"actions_accepted": 0, "actions_duplicate": 0, "bad_actions": 0, "malformed": 0,
                         "snapshots_published": 0, "snapshot_requests": 0}
        self.ack_readers = set()  # routing ids that asked for `acks` messages
        self.pending_acks = {}  # routing id -> [[client_seq, action_seq, version], ...] of this batch
        self.published_version = None
        self.last_published = 0.0

    def endpoints(self):
        return {"actions": self.actions.getsockopt_string(zmq.LAST_ENDPOINT),
                "feed": self.feed.getsockopt_string(zmq.LAST_ENDPOINT)}

    def reply(self, envelope, header, payload=None):
        self.flush_acks(envelope[0])
        frames = envelope + [msgpack.packb([VERSION] + header)]
        if payload is not None:
            frames.append(payload)
        self.actions.send_multipart(frames)

    def ack(self, envelope, seq, action_seq, version):
        if envelope[0] in self.ack_readers:
            self.pending_acks.setdefault(envelope[0], []).append([seq, action_seq, version])
        else:
            self.reply(envelope, ["ack", seq, action_seq, version])

    def flush_acks(self, identity=None):
        """Sends the acks this batch owes `identity` (every connection's without one)."""
        if not self.pending_acks:
            return
        for peer in [identity] if identity is not None else list(self.pending_acks):
            acks = self.pending_acks.pop(peer, None)
            for start in range(0, len(acks or []), MAX_ACKS):
                part = acks[start:start + MAX_ACKS]
                if len(part) == 1:
                    self.actions.send_multipart([peer, msgpack.packb([VERSION, "ack"] + part[0])])
                else:
                    self.actions.send_multipart([peer, msgpack.packb([VERSION, "acks", len(part)]), msgpack.packb(part)])

    def error(self, envelope, ref, code, message):
        self.reply(envelope, ["error", ref, code, message])

    def handle(self, frames):
        envelope, body = frames[:1], frames[1:]
        try:
            header = msgpack.unpackb(body[0], raw=False)
            version, kind = header[0], header[1]
        except Exception:
            self.counters["malformed"] += 1
            self.error(envelope, 0, "malformed", "header is not a MessagePack array [version, kind, ...]")
            return
        if version != VERSION:
            self.error(envelope, 0, "unsupported_version", f"protocol version {version} is not supported")
            return
        if kind == "action" and len(header) == 4 and len(body) == 2:
            self.action(envelope, header[2], header[3], body[1])
        elif kind == "snapshot" and len(header) == 3:
            self.counters["snapshot_requests"] += 1
            self.reply(envelope, ["snapshot", header[2], self.version, self.action_seq, APP], msgpack.packb(self.state))
        elif kind == "ping" and len(header) == 3:
            self.reply(envelope, ["pong", header[2], self.version])
        elif kind == "features" and len(header) == 4 and isinstance(header[3], list):
            if "acks" in header[3]:
                self.ack_readers.add(envelope[0])
            else:
                self.ack_readers.discard(envelope[0])
            self.reply(envelope, ["features", header[2], ["ack_batches"]])
        elif kind == "stats" and len(header) == 3:
            counters = dict(self.counters, version=self.version, action_seq=self.action_seq)
            self.reply(envelope, ["stats", header[2], counters])
        elif kind in ("action", "snapshot", "ping", "stats", "features"):
            self.counters["malformed"] += 1
            self.error(envelope, 0, "malformed", f"{kind} has the wrong shape")
        else:
            # ref: the first unsigned integer after the kind (PROTOCOL.md), e.g. a request_id.
            ref = next((x for x in header[2:] if isinstance(x, int) and not isinstance(x, bool) and x >= 0), 0)
            self.error(envelope, ref, "unknown_kind", f"unknown kind '{kind}' on the actions socket")

    def action(self, envelope, client, seq, payload):
        seen = self.clients.setdefault(client, {})
        if seq in seen:
            self.counters["actions_duplicate"] += 1
            action_seq, version = seen[seq]
            self.ack(envelope, seq, action_seq, version)
            return
        try:
            action = msgpack.unpackb(payload, raw=False)
        except Exception:
            action = None
        if action != {"countUp": {}}:
            self.counters["bad_actions"] += 1
            self.error(envelope, seq, "bad_action", "this baseline authority only applies countUp")
            return
        self.action_seq += 1
        self.state["count"] += 1
        self.version += 1
        self.counters["actions_accepted"] += 1
        seen[seq] = (self.action_seq, self.version)
        if len(seen) > 2 * REMEMBERED:
            for old in sorted(seen)[:-REMEMBERED]:
                del seen[old]
        self.ack(envelope, seq, self.action_seq, self.version)

    def publish(self):
        now = time.monotonic()
        if self.version != self.published_version:
            self.feed.send_multipart([b"snapshot", msgpack.packb([VERSION, self.version, self.action_seq]), msgpack.packb(self.state)])
            self.counters["snapshots_published"] += 1
            self.published_version = self.version
            self.last_published = now
        elif now - self.last_published >= 1.0:
            self.feed.send_multipart([b"heartbeat", msgpack.packb([VERSION, self.version, self.action_seq])])
            self.last_published = now

    def serve(self):
        poller = zmq.Poller()
        poller.register(self.actions, zmq.POLLIN)
        while True:
            if poller.poll(250):
                for _ in range(self.batch):
                    try:
                        frames = self.actions.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    self.handle(frames)
            self.flush_acks()
            self.publish()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--actions", default="tcp://*:7001", help="where clients send actions (bind)")
    parser.add_argument("--feed", default="tcp://*:7003", help="where snapshots are published (bind)")
    parser.add_argument("--batch", type=int, default=2048, help="messages read per batch before one snapshot")
    arguments = parser.parse_args()

    def stop(signum, _frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    context = zmq.Context()
    try:
        authority = Authority(context, arguments.actions, arguments.feed, arguments.batch)
        print(json.dumps(authority.endpoints()), flush=True)
        authority.serve()
    finally:
        context.destroy(linger=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
