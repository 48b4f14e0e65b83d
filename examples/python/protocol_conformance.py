#!/usr/bin/env python3
"""Checks a running ReactorBus authority against docs/PROTOCOL.md, written from that page alone.

    python3 protocol_conformance.py --actions tcp://127.0.0.1:7001 --feed tcp://127.0.0.1:7003

The authority must be fresh (no action accepted yet, no other client) and run the `counter` app
without workers: the checks expect exact sequence numbers, versions and counters. Every check
prints one line to stdout (`ok ...` or `FAIL ...: what differed`); the last line is
`protocol: N passed, M failed`. Exit status 0 when every check passed, 1 otherwise, 2 when the
authority did not answer at all. Needs pyzmq and msgpack (scripts/ensure-deps.sh --python).

The list of stats names is read from the document's "Stats" table (--doc), so that the check
"stats has every documented name and no other" follows the document, not a copy of it.

Last, on a connection of its own, it asks for batched acks (`features`) and checks that the
acks of actions sent in a burst come as `ack` and `acks` messages, each action acked once, in
order ("Batched acks"), while the connection that never asked gets an `ack` each.

With --workers, it plays a worker on that endpoint (the authority must have no other
worker): registration, the features it names, a worker's `features`, a turn's jobs in one
`jobs` message and a worker's reports in one `reports` message ("Workers socket").
"""

import argparse
import os
import re
import sys
import time
import uuid

import msgpack
import zmq

VERSION = 1
DEFAULT_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "PROTOCOL.md")


class Unanswered(Exception):
    """The authority sent nothing within the deadline."""


class Conformance:
    def __init__(self, actions, feed, doc, timeout, workers=None):
        self.context = zmq.Context()
        self.workers = workers
        self.actions = self.context.socket(zmq.DEALER)
        self.actions.setsockopt(zmq.LINGER, 0)
        self.actions.connect(actions)
        self.actions_endpoint = actions
        self.feed = self.context.socket(zmq.SUB)
        self.feed.setsockopt(zmq.LINGER, 0)
        self.feed.connect(feed)
        self.doc = doc
        self.timeout = timeout
        self.passed = 0
        self.failed = 0
        self.client_id = f"conformance-{uuid.uuid4()}"
        self.expected = {}  # counter name -> exact value the authority must report at the end

    # -- reporting --------------------------------------------------------------------------

    def check(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"ok   {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}", flush=True)
        return condition

    def expect(self, name, actual, wanted):
        return self.check(name, actual == wanted, f"expected {wanted!r}, got {actual!r}")

    def count(self, counter, by=1):
        self.expected[counter] = self.expected.get(counter, 0) + by

    # -- actions socket ---------------------------------------------------------------------

    def request(self, frames):
        """Sends raw frames, returns the answer's frames (header decoded, payload raw)."""
        self.actions.send_multipart(frames)
        if not self.actions.poll(int(self.timeout * 1000)):
            raise Unanswered(f"no answer within {self.timeout} s to {frames[0]!r}")
        reply = self.actions.recv_multipart()
        return [msgpack.unpackb(reply[0], raw=False)] + reply[1:]

    def action(self, seq, payload, client_id=None):
        header = msgpack.packb([VERSION, "action", self.client_id if client_id is None else client_id, seq])
        return self.request([header, msgpack.packb(payload)])

    def expect_error(self, name, reply, ref, code):
        header = reply[0]
        shape_ok = (isinstance(header, list) and len(header) == 5 and header[:2] == [VERSION, "error"]
                    and isinstance(header[4], str) and len(reply) == 1)
        self.check(f"{name}: error is [1, \"error\", ref, code, message], one frame", shape_ok, f"got {reply!r}")
        if shape_ok:
            self.expect(f"{name}: error code", header[3], code)
            self.expect(f"{name}: error ref", header[2], ref)

    def expect_ack(self, name, reply, client_seq, action_seq, version):
        self.expect(f"{name}: ack", reply, [[VERSION, "ack", client_seq, action_seq, version]])

    # -- checks -----------------------------------------------------------------------------

    def run(self):
        self.feed.setsockopt(zmq.SUBSCRIBE, b"")
        self.check_ping()
        self.check_feed_is_live()
        self.check_snapshot(0, 0, {"count": 0})
        self.check_actions()
        self.check_refusals()
        self.check_extra_elements()
        self.check_snapshot(13, 13, {"count": 13})
        self.check_feed_after_actions()
        self.check_stats()
        if self.workers:
            self.check_worker_batches()
        self.check_ack_batches()

    def check_ping(self):
        reply = self.request([msgpack.packb([VERSION, "ping", 7])])
        header = reply[0]
        self.check("ping: pong is one frame [1, \"pong\", request_id, version, start_id, app, schema, compatible, term]",
                   len(reply) == 1 and isinstance(header, list) and len(header) == 9 and header[:3] == [VERSION, "pong", 7],
                   f"got {reply!r}")
        if len(header) == 9:
            self.expect("ping: schema is the app's schema version", header[6], 1)
            self.expect("ping: compatible lists no other version", header[7], [])
            self.expect("ping: term is nil for an authority without an election", header[8], None)
            self.expect("ping: app names the authority's app", header[5], "counter")
            self.expect("ping: version of a fresh authority", header[3], 0)
            start_id = header[4]
            self.check("ping: start_id is a non-zero uint", isinstance(start_id, int) and 0 < start_id < 2**64, f"got {start_id!r}")
            again = self.request([msgpack.packb([VERSION, "ping", 8])])[0]
            self.expect("ping: start_id is the same in every pong of one process", again, [VERSION, "pong", 8, 0, start_id, "counter", 1, [], None])

    def receive_feed(self, deadline):
        """The next feed message as (topic bytes, decoded header, payload or None)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not self.feed.poll(int(remaining * 1000)):
            return None
        frames = self.feed.recv_multipart()
        header = msgpack.unpackb(frames[1], raw=False) if len(frames) > 1 else None
        payload = msgpack.unpackb(frames[2], raw=False) if len(frames) > 2 else None
        return frames[0], header, payload, len(frames)

    def check_feed_is_live(self):
        # A new subscriber is sent nothing of its own; within a second an idle authority
        # publishes a heartbeat (or, here, possibly a snapshot), both at version 0.
        message = self.receive_feed(time.monotonic() + 5)
        if not self.check("feed: a subscriber hears the authority within 5 s", message is not None, "nothing on the feed"):
            return
        topic, header, payload, frames = message
        self.check("feed: the first message is a heartbeat or a snapshot", topic in (b"heartbeat", b"snapshot"), f"topic {topic!r}")
        if topic == b"heartbeat":
            self.expect("feed: heartbeat [topic, [1, version, action_seq]] at version 0", (frames, header), (2, [VERSION, 0, 0]))
        else:
            self.expect("feed: snapshot at version 0", (frames, header, payload), (3, [VERSION, 0, 0], {"count": 0}))

    def check_snapshot(self, version, action_seq, state):
        reply = self.request([msgpack.packb([VERSION, "snapshot", 11])])
        self.count("snapshot_requests")
        self.expect(f"snapshot: header at version {version}", reply[0], [VERSION, "snapshot", 11, version, action_seq, "counter"])
        self.check("snapshot: two frames", len(reply) == 2, f"got {len(reply)} frames")
        if len(reply) == 2:
            self.expect("snapshot: counter state", msgpack.unpackb(reply[1], raw=False), state)

    def check_actions(self):
        up, up_async = {"countUp": {}}, {"countUpAsync": {}}
        self.expect_ack("first action", self.action(1, up), 1, 1, 1)
        self.count("actions_accepted")
        self.expect_ack("resend, same payload", self.action(1, up), 1, 1, 1)
        self.count("actions_duplicate")
        self.expect_error("resend, another payload", self.action(1, up_async), 1, "conflict")
        self.count("actions_conflict")
        self.expect_error("not a counter action", self.action(2, {"countDown": {}}), 2, "bad_action")
        self.count("bad_actions")
        self.expect_ack("a refused client_seq is sent again with another payload", self.action(2, up), 2, 2, 2)
        self.count("actions_accepted")
        self.expect_ack("a gap in client_seq", self.action(5, up), 5, 3, 3)
        self.count("actions_accepted")
        self.expect_ack("the gap filled later", self.action(4, up), 4, 4, 4)
        self.count("actions_accepted")
        self.expect_ack("a resend inside the remembered window", self.action(2, up), 2, 2, 2)
        self.count("actions_duplicate")
        # Another client: 9 actions, so that its first ack is no longer among the last 8 kept.
        other = f"conformance-other-{uuid.uuid4()}"
        for seq in range(1, 10):
            self.expect_ack(f"second client action {seq}", self.action(seq, up, other), seq, 4 + seq, 4 + seq)
            self.count("actions_accepted")
        self.expect_ack("resend older than the remembered acks: action_seq 0, current version", self.action(1, up, other), 1, 0, 13)
        self.count("actions_duplicate")
        self.expect_ack("such a resend with another payload is not compared: same answer", self.action(1, up_async, other), 1, 0, 13)
        self.count("actions_duplicate")
        self.count("mutations_applied", 13)
        self.expected.update({"version": 13, "action_seq": 13, "clients": 2})

    def check_refusals(self):
        self.expect_error("version 0", self.request([msgpack.packb([0, "ping", 77])]), 77, "unsupported_version")
        self.expect_error("version 2 action", self.request([msgpack.packb([2, "action", self.client_id, 40]), msgpack.packb({"countUp": {}})]),
                          40, "unsupported_version")
        self.expect_error("version 0 with an unknown kind", self.request([msgpack.packb([0, "nope", "x", 5])]), 5, "unsupported_version")
        self.count("unsupported_version", 3)
        self.expect_error("unknown kind", self.request([msgpack.packb([VERSION, "frobnicate", 31])]), 31, "unknown_kind")
        self.expect_error("unknown kind, no integer", self.request([msgpack.packb([VERSION, "frobnicate", "a"])]), 0, "unknown_kind")
        self.count("unknown_kind", 2)
        self.expect_error("header not MessagePack", self.request([b"\xc1"]), 0, "malformed")
        self.expect_error("header not an array", self.request([msgpack.packb({"v": 1})]), 0, "malformed")
        self.expect_error("version not an unsigned integer", self.request([msgpack.packb([-1, "ping", 3])]), 3, "malformed")
        self.expect_error("action without a payload frame", self.request([msgpack.packb([VERSION, "action", self.client_id, 50])]), 50, "malformed")
        self.expect_error("ping with a payload frame", self.request([msgpack.packb([VERSION, "ping", 51]), b"\x80"]), 51, "malformed")
        self.expect_error("client_seq 0", self.action(0, {"countUp": {}}), 0, "malformed")
        self.expect_error("empty client_id", self.action(52, {"countUp": {}}, client_id=""), 52, "malformed")
        self.expect_error("client_id of 65 bytes", self.action(53, {"countUp": {}}, client_id="c" * 65), 53, "malformed")
        self.count("malformed", 8)

    def check_extra_elements(self):
        # The authority reads exactly the documented elements: one more is `malformed`.
        self.expect_error("ping with an extra element", self.request([msgpack.packb([VERSION, "ping", 61, "extra"])]), 61, "malformed")
        self.expect_error("stats with an extra element", self.request([msgpack.packb([VERSION, "stats", 62, 0])]), 62, "malformed")
        self.expect_error("snapshot with an extra element", self.request([msgpack.packb([VERSION, "snapshot", 63, None])]), 63, "malformed")
        header = msgpack.packb([VERSION, "action", self.client_id, 64, "extra"])
        self.expect_error("action with an extra element", self.request([header, msgpack.packb({"countUp": {}})]), 64, "malformed")
        self.count("malformed", 4)

    def check_feed_after_actions(self):
        # Every applied mutation in order, versions consecutive; snapshots with rising versions.
        mutations, snapshots, odd = [], [], []
        deadline = time.monotonic() + 10
        while len(mutations) < 13 or not snapshots or snapshots[-1][0] < 13:
            message = self.receive_feed(deadline)
            if message is None:
                break
            topic, header, payload, frames = message
            if topic == b"mutation":
                mutations.append((header, payload, frames))
            elif topic == b"snapshot":
                snapshots.append((header[1], header, payload, frames))
            elif topic != b"heartbeat" or frames != 2 or not isinstance(header, list) or len(header) != 3 or header[0] != VERSION:
                odd.append((topic, header, payload, frames))
        self.expect("feed: every other message is a heartbeat [topic, [1, version, action_seq]]", odd, [])
        wanted = [([VERSION, v, v, "sync", None, 0], {"increase": {}}, 3) for v in range(1, 14)]
        self.expect("feed: 13 sync mutations [1, version, action_seq, \"sync\", nil, 0] {\"increase\": {}}", mutations, wanted)
        versions = [s[0] for s in snapshots]
        self.check("feed: snapshot versions rise", versions == sorted(set(versions)) and versions != [], f"versions {versions}")
        if snapshots:
            _, header, payload, frames = snapshots[-1]
            self.expect("feed: last snapshot", (frames, header, payload), (3, [VERSION, 13, 13], {"count": 13}))
            wrong = [s for s in snapshots if s[2] != {"count": s[0]} or s[1] != [VERSION, s[0], s[0]]]
            self.expect("feed: every counter snapshot has count = version = action_seq", wrong, [])

    def documented_stats(self):
        with open(self.doc, encoding="utf-8") as handle:
            text = handle.read()
        section = re.search(r"^### Stats\n(.*?)(?=^#)", text, re.S | re.M)
        if section is None:
            return None
        return {match for match in re.findall(r"^\| `([a-z_]+)` \|", section.group(1), re.M)}

    def check_stats(self):
        reply = self.request([msgpack.packb([VERSION, "stats", 90])])
        header = reply[0]
        if not self.check("stats: one frame [1, \"stats\", request_id, counters]",
                          len(reply) == 1 and isinstance(header, list) and len(header) == 4 and header[:3] == [VERSION, "stats", 90]
                          and isinstance(header[3], dict), f"got {reply!r}"):
            return
        counters = header[3]
        self.check("stats: every value is an unsigned integer", all(isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in counters.items()),
                   f"got {counters!r}")
        documented = self.documented_stats()
        if self.check(f"stats: the document lists the names ({self.doc})", documented, "no \"### Stats\" table found"):
            self.expect("stats: names missing from the reply", sorted(documented - set(counters)), [])
            self.expect("stats: names the document does not list", sorted(set(counters) - documented), [])
        for name, value in sorted(self.expected.items()):
            self.expect(f"stats: {name}", counters.get(name), value)
        for name in ("actions_stale", "actions_busy", "actions_unknown_client", "jobs_dispatched", "workers", "open_jobs", "ack_batches"):
            self.expect(f"stats: {name}", counters.get(name), 0)


    # -- workers socket ---------------------------------------------------------------------

    def worker_receive(self, worker):
        """The next message the authority sends the worker, heartbeats skipped: (header, frames)."""
        deadline = time.monotonic() + self.timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not worker.poll(int(remaining * 1000)):
                raise Unanswered(f"the authority sent the worker nothing within {self.timeout} s")
            frames = worker.recv_multipart()
            header = msgpack.unpackb(frames[0], raw=False)
            if not (isinstance(header, list) and header[:2] == [VERSION, "heartbeat"]):
                return header, frames

    def check_worker_batches(self):
        effect, increase = msgpack.packb({"slowIncrease": {}}), msgpack.packb({"increase": {}})
        worker = self.context.socket(zmq.DEALER)
        worker.setsockopt(zmq.LINGER, 0)
        worker.connect(self.workers)
        worker.send(msgpack.packb([VERSION, "ready", "conformance-worker", "counter", 3, [], 1]))
        if not worker.poll(int(self.timeout * 1000)):
            raise Unanswered("no welcome to the worker's ready")
        welcome = msgpack.unpackb(worker.recv_multipart()[0], raw=False)
        self.expect("worker: ready is answered [1, \"welcome\", heartbeat_ms]", welcome, [VERSION, "welcome", 500])
        if not worker.poll(int(self.timeout * 1000)):
            raise Unanswered("no heartbeat after the welcome")
        heartbeat = msgpack.unpackb(worker.recv_multipart()[0], raw=False)
        named = set(heartbeat[2]) if isinstance(heartbeat, list) and len(heartbeat) == 3 and isinstance(heartbeat[2], list) else set()
        self.check("worker: a heartbeat after the welcome names done_with_emit, job_batches and report_batches",
                   heartbeat[:2] == [VERSION, "heartbeat"] and {"done_with_emit", "job_batches", "report_batches"} <= named, f"got {heartbeat!r}")
        worker.send(msgpack.packb([VERSION, "features", ["jobs"], 1 << 20]))
        # Three actions one after another: a job per turn, so a `job` message each.
        client = f"conformance-jobs-{uuid.uuid4()}"
        for seq in range(1, 4):
            self.expect_ack(f"worker: async action {seq} acked at acceptance", self.action(seq, {"countUpAsync": {}}, client), seq, 13 + seq, 13)
            worker.send(msgpack.packb([VERSION, "heartbeat"]))  # alive however slow the machine
        singles = [self.worker_receive(worker) for _ in range(3)]
        self.expect("worker: a turn's one job is a job message", [(h, f[1:]) for h, f in singles],
                    [([VERSION, "job", 13 + n, 0, "slowIncrease"], [effect]) for n in range(1, 4)])
        # Three more wait: the worker holds 3 (its capacity). Its reports of the first three in
        # one message free three slots in one turn: the three waiting jobs come as one message.
        for seq in range(4, 7):
            self.expect_ack(f"worker: async action {seq} acked while its job waits", self.action(seq, {"countUpAsync": {}}, client), seq, 13 + seq, 13)
            worker.send(msgpack.packb([VERSION, "heartbeat"]))
        worker.send_multipart([msgpack.packb([VERSION, "reports", 3]),
                               msgpack.packb([[13 + n, 0, "done", 1, increase] for n in range(1, 4)])])
        header, frames = self.worker_receive(worker)
        self.expect("worker: the jobs one turn assigns come as [1, \"jobs\", 3] and one body frame", (header, len(frames)), ([VERSION, "jobs", 3], 2))
        if len(frames) == 2:
            self.expect("worker: the jobs body lists [action_seq, effect_index, kind, effect] in order",
                        msgpack.unpackb(frames[1], raw=False), [[13 + n, 0, "slowIncrease", effect] for n in range(4, 7)])
        # A reports message whose count disagrees with its body: refused whole, nothing applied.
        worker.send_multipart([msgpack.packb([VERSION, "reports", 2]), msgpack.packb([[17, 0, "done", 1, increase]])])
        header, frames = self.worker_receive(worker)
        self.check("worker: a malformed reports message is answered error malformed, ref 0",
                   isinstance(header, list) and header[:4] == [VERSION, "error", 0, "malformed"] and len(frames) == 1, f"got {header!r}")
        self.check_snapshot(16, 19, {"count": 16})
        worker.send_multipart([msgpack.packb([VERSION, "reports", 3]),
                               msgpack.packb([[13 + n, 0, "done", 1, increase] for n in range(4, 7)])])
        deadline = time.monotonic() + self.timeout
        reply = self.request([msgpack.packb([VERSION, "snapshot", 11])])
        while reply[0][3] != 19 and time.monotonic() < deadline:
            time.sleep(0.01)
            reply = self.request([msgpack.packb([VERSION, "snapshot", 11])])
        self.expect("worker: every report applied once: version, action_seq and count 19",
                    (reply[0][3:5], msgpack.unpackb(reply[1], raw=False)), ([19, 19], {"count": 19}))
        worker.send(msgpack.packb([VERSION, "bye"]))
        worker.close()

    def read_acks(self, socket, count):
        """Reads replies until `count` acks arrived: ([(client_seq, action_seq, version)], messages)
        where messages lists each reply's kind and, for `acks`, whether its count matched its body."""
        acks, messages = [], []
        deadline = time.monotonic() + self.timeout
        while len(acks) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not socket.poll(int(remaining * 1000)):
                raise Unanswered(f"{len(acks)} of {count} acks within {self.timeout} s")
            frames = socket.recv_multipart()
            header = msgpack.unpackb(frames[0], raw=False)
            if header[:2] == [VERSION, "ack"] and len(header) == 5 and len(frames) == 1:
                acks.append(tuple(header[2:]))
                messages.append(("ack", True))
            elif header[:2] == [VERSION, "acks"] and len(header) == 3 and len(frames) == 2:
                body = msgpack.unpackb(frames[1], raw=False)
                messages.append(("acks", isinstance(body, list) and len(body) == header[2] and header[2] >= 2
                                 and all(isinstance(a, list) and len(a) == 3 for a in body)))
                acks.extend(tuple(a) for a in body)
            else:
                messages.append((repr(header), False))
        return acks, messages

    def burst(self, socket, client, count):
        up = msgpack.packb({"countUp": {}})
        for seq in range(1, count + 1):
            socket.send_multipart([msgpack.packb([VERSION, "action", client, seq]), up])
        return self.read_acks(socket, count)

    def check_ack_batches(self):
        batched = self.context.socket(zmq.DEALER)
        batched.setsockopt(zmq.LINGER, 0)
        batched.connect(self.actions_endpoint)
        batched.send(msgpack.packb([VERSION, "features", 21, ["acks"]]))
        if not batched.poll(int(self.timeout * 1000)):
            raise Unanswered("no answer to features")
        reply = batched.recv_multipart()
        self.expect("acks: features is answered [1, \"features\", request_id, [\"ack_batches\"]], one frame",
                    (len(reply), msgpack.unpackb(reply[0], raw=False)), (1, [VERSION, "features", 21, ["ack_batches"]]))
        # Actions sent in a burst: the authority reads several in one turn and their acks share a
        # message. Which ones do depends on timing, so up to five bursts until one did.
        kinds, shapes, order = [], [], []
        for attempt in range(5):
            acks, messages = self.burst(batched, f"conformance-acks-{uuid.uuid4()}", 40)
            kinds += [kind for kind, _ in messages]
            shapes += [(kind, ok) for kind, ok in messages if not ok]
            seqs = [a[0] for a in acks]
            numbers = [(a[1] - acks[0][1], a[2] - acks[0][2]) for a in acks]
            order.append(seqs == list(range(1, 41)) and numbers == [(n, n) for n in range(40)])
            if "acks" in kinds:
                break
        self.expect("acks: every reply is an ack, or [1, \"acks\", n] with a body of n >= 2 [client_seq, action_seq, version]", shapes, [])
        self.check("acks: each action of a burst acked once, in order, action_seq and version consecutive", all(order), f"bursts in order: {order}")
        self.check("acks: a burst's acks share an acks message", "acks" in kinds, f"replies: {kinds}")
        # The connection that never asked gets an ack per action, whatever the timing.
        acks, messages = self.burst(self.actions, f"conformance-single-{uuid.uuid4()}", 40)
        self.expect("acks: a connection that did not ask gets one ack message per action", [kind for kind, _ in messages], ["ack"] * 40)
        self.expect("acks: in order", [a[0] for a in acks], list(range(1, 41)))
        stats = self.request([msgpack.packb([VERSION, "stats", 91])])[0][3]
        self.expect("acks: stats ack_batches counts the acks messages sent", stats.get("ack_batches"), kinds.count("acks"))
        batched.close()


def main():
    parser = argparse.ArgumentParser(description="Checks a fresh counter authority against docs/PROTOCOL.md.")
    parser.add_argument("--actions", required=True, help="the authority's actions endpoint")
    parser.add_argument("--feed", required=True, help="the authority's feed endpoint")
    parser.add_argument("--doc", default=DEFAULT_DOC, help="the protocol document (for the list of stats names)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for each answer")
    parser.add_argument("--workers", help="the authority's workers endpoint: also check the workers socket as a worker (no other worker may run)")
    arguments = parser.parse_args()
    conformance = Conformance(arguments.actions, arguments.feed, arguments.doc, arguments.timeout, arguments.workers)
    status = 0
    try:
        conformance.run()
    except Unanswered as error:
        conformance.check("the authority answers", False, str(error))
        status = 2
    except Exception as error:  # a reply of the wrong shape broke a check itself
        conformance.check("replies have the documented shapes", False, f"{type(error).__name__}: {error}")
    print(f"protocol: {conformance.passed} passed, {conformance.failed} failed", flush=True)
    conformance.context.destroy(linger=0)
    if status == 0 and conformance.failed:
        status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
