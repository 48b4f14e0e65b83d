#!/usr/bin/env python3
"""Writes the committed seed corpora and dictionaries of the libFuzzer harnesses.

    python3 Fuzz/make-corpus.py          # rewrites Fuzz/corpus/{msgpack,authority}/ and Fuzz/*.dict

Independent of the Swift code on purpose: the MessagePack seeds are written with Python's
`msgpack` package in the forms docs/PROTOCOL.md ("App values") describes, and the authority seeds
are scripts (see Fuzz/Sources/fuzz-authority/FuzzAuthority.swift, `Step`) whose raw frames are
protocol messages built from docs/PROTOCOL.md. Files are named by content, so reruns are stable;
crash reproducers (`Fuzz/corpus/*/regression-*`) are kept.
"""
import hashlib
import math
import os
import struct
import sys

try:
    import msgpack
except ImportError:
    sys.exit("make-corpus.py needs Python's msgpack package (scripts/ensure-deps.sh --python)")

ROOT = os.path.dirname(os.path.abspath(__file__))


def pack(value, single_float=False):
    return msgpack.packb(value, use_bin_type=True, use_single_float=single_float, datetime=False)


def write_corpus(name, seeds):
    directory = os.path.join(ROOT, "corpus", name)
    os.makedirs(directory, exist_ok=True)
    for entry in os.listdir(directory):
        if entry.startswith("seed-"):
            os.remove(os.path.join(directory, entry))
    for label, data in seeds:
        digest = hashlib.sha1(data).hexdigest()[:12]
        with open(os.path.join(directory, f"seed-{label}-{digest}"), "wb") as handle:
            handle.write(data)
    print(f"{name}: {len(seeds)} seeds in {os.path.relpath(directory)}")


def write_dict(name, tokens):
    lines = ["# libFuzzer dictionary, written by Fuzz/make-corpus.py"]
    for index, token in enumerate(tokens):
        escaped = "".join(chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x5C) else f"\\x{b:02x}" for b in token)
        lines.append(f'kw{index}="{escaped}"')
    with open(os.path.join(ROOT, f"{name}.dict"), "w") as handle:
        handle.write("\n".join(lines) + "\n")


# MARK: MessagePack seeds (fuzz-msgpack decodes each input as every type it knows)

def case(name, **fields):
    """A Swift enum case as the encoder writes it: {name: {label: value}}."""
    return {name: fields}


def shape_seeds():
    point = case("point", x=3, y=-4)
    return [
        case("empty"),
        point,
        {"label": {"_0": "héllo"}},
        {"scaled": {"_0": point, "factor": 2.5}},
        {"group": {"_0": [case("empty"), point]}},
        {"tagged": {"id": 7, "_1": point}},
    ]


def msgpack_seeds():
    uuid = bytes(range(16))
    # The timestamp extension (-1) in its three sizes; Python's ExtType only takes codes 0...127.
    ts32 = b"\xd6\xff" + struct.pack(">I", 1_700_000_000)
    ts64 = b"\xd7\xff" + struct.pack(">Q", (500_000_000 << 34) | 1_700_000_000)
    ts96 = b"\xc7\x0c\xff" + struct.pack(">Iq", 1, -62_135_596_800)
    timestamp64 = msgpack.Timestamp(1_700_000_000, 500_000_000)
    shapes = shape_seeds()
    document = {
        "id": uuid,
        "created": timestamp64,
        "title": "doc",
        "tags": ["a", "b"],
        "bytes": b"\x00\x01\xff",
        "data": b"data",
        "byName": {"one": 1, "two": 2},
        "byNumber": {1: "one", -2: "minus two"},
        "byColor": {"red": True, "blue": False},
        "byCell": [{"row": 1, "column": 2}, "cell"],
        "matrix": [[1, -2], [], [127]],
        "shapes": shapes,
        "extra": {"any": [1, "two", None]},
        "children": [],
    }
    scalars = {
        "flag": True, "small": -128, "short": 32767, "word": -2_147_483_648, "long": -(2**63), "int": 42,
        "ubyte": 255, "ushort": 65535, "uword": 2**32 - 1, "ulong": 2**64 - 1, "uint": 7,
        "single": 1.5, "double": math.pi, "text": "ünïcödé ✓", "maybe": None,
    }
    # Durable snapshots (AuthorityCheckpoint, SequencerCheckpoint, ClientLedger). Swift writes
    # dictionaries whose keys are neither String nor Int as flat [key, value, ...] arrays.
    job = {"actionSeq": 2, "effectIndex": 0}
    ack = {"actionSeq": 1, "version": 1}
    ledger = {"window": 4096, "maxClients": 4096, "clock": 2,
              "clients": {"c1": {"highest": 2, "acks": [1, ack, 2, dict(ack, actionSeq=2)], "lastSeen": 2}}}
    primes_job = {"effect": case("factorize", n=12, delayMs=0, ordered=True), "lane": "ordered", "nextEmit": 1,
                  "buffered": [2, case("finished", n=12)], "declaredCount": 3}
    sequencer = {"state": {"requested": 1, "working": [{"n": 12, "factors": [2]}], "completed": [], "failures": []},
                 "version": 2, "actionSeq": 2,
                 "ledger": {"open": [job, primes_job], "actions": [2, {"effectCount": 1, "remaining": 1}],
                            "lanes": {"ordered": [job]}}}
    counter_job = {"effect": case("slowIncrease"), "nextEmit": 0, "buffered": [],
                   "failure": {"message": "timed out", "attempts": 2}}
    authority_checkpoint = {
        "app": "counter",
        "sequencer": {"state": {"count": 1}, "version": 1, "actionSeq": 2,
                      "ledger": {"open": [job, counter_job], "actions": [2, {"effectCount": 1, "remaining": 1}], "lanes": {}}},
        "clients": ledger,
        "actionClients": [2, "c1"],
    }
    values = [
        ("nil", pack(None)), ("true", pack(True)), ("uint8", pack(200)), ("uint64", pack(2**64 - 1)),
        ("int64", pack(-(2**63))), ("negfix", pack(-5)), ("float32", pack(0.1, single_float=True)),
        ("float64", pack(-0.0)), ("nan", pack(float("nan"))), ("inf", pack(float("-inf"), single_float=True)),
        ("str", pack("a\u0000\"\\\n\u001f")), ("bin", pack(b"\x00\xff")),
        ("ext", pack(msgpack.ExtType(5, b"xyz"))),
        ("ts32", ts32), ("ts64", ts64), ("ts96", ts96),
        ("nonstringkeys", pack({1: "a", None: [True], 2.5: {"x": b"\x01"}})),
        ("intkeys", pack({1: b"x", -3: b"", "7": [1, 2]})),
        # 32 nested arrays: the deepest input msgpack-c unpacks (docs/PROTOCOL.md, Limits).
        ("deep", b"\x91" * 31 + b"\x90"),
        ("scalars", pack(scalars)),
        ("scalars-wide", b"\xde\x00\x01" + pack("int") + b"\xd3" + struct.pack(">q", 42)),
        ("document", pack(document)),
        ("document-nested", pack(dict(document, children=[dict(document, children=[])]))),
        ("shapes", pack(shapes)),
        ("custom", pack({"name": "n", "list": [1, -1, 2**62], "inner": {"row": 1, "column": 2}, "base": shapes[1]})),
        ("wrapped", pack([["a", 1], ["b", None]])),
        ("colors", pack({"green": uuid})),
        ("cells", pack([{"row": 0, "column": 0}, b"\x00", {"row": -1, "column": 5}, b""])),
        ("counter-action", pack(case("countUpAsync"))),
        ("counter-state", pack({"count": 3})),
        ("primes-action", pack(case("factorInOrder", n=360, delayMs=5))),
        ("primes-mutation", pack(case("failed", n=0, reason="zero"))),
        ("primes-effect", pack(case("factorize", n=97, delayMs=0, ordered=True))),
        ("primes-state", pack({"requested": 2, "working": [{"n": 12, "factors": [2, 2]}],
                               "completed": [{"n": 7, "factors": [7]}], "failures": ["0: zero"]})),
        ("record-accepted", pack(case("accepted", client="c1", clientSeq=1, action=pack(case("countUp"))))),
        ("record-emitted", pack(case("emitted", job={"actionSeq": 1, "effectIndex": 0}, emitIndex=0, mutation=pack(case("increase"))))),
        ("record-failed", pack(case("failed", job={"actionSeq": 2, "effectIndex": 0}, failure={"message": "boom", "attempts": 3}))),
        ("client-ledger", pack(ledger)),
        ("sequencer-checkpoint", pack(sequencer)),
        ("authority-checkpoint", pack(authority_checkpoint)),
        ("json", '{"a":[1,-0,2.5e3,"x\\u00e9\\ud83d\\ude00",null,true,{}],"b":-9223372036854775809}'.encode()),
        ("json-number", b"-0.0"),
    ]
    return values


def msgpack_tokens():
    names = ["empty", "point", "x", "y", "label", "_0", "_1", "scaled", "factor", "group", "tagged", "id",
             "flag", "small", "short", "word", "long", "int", "ubyte", "ushort", "uword", "ulong", "uint",
             "single", "double", "text", "maybe", "created", "title", "tags", "bytes", "data", "byName",
             "byNumber", "byColor", "byCell", "matrix", "shapes", "extra", "children", "row", "column",
             "red", "green", "blue", "name", "list", "inner", "base", "super", "countUp", "countUpAsync",
             "count", "factor", "factorInOrder", "n", "delayMs", "requested", "prime", "finished", "failed",
             "reason", "factorize", "ordered", "working", "completed", "failures", "factors", "accepted",
             "client", "clientSeq", "action", "emitted", "job", "actionSeq", "effectIndex", "emitIndex",
             "mutation", "completed", "emitCount", "failure", "message", "attempts", "window", "maxClients",
             "clients", "clock", "highest", "acks", "lastSeen", "version", "state", "sequencer", "app",
             "actionClients", "ledger"]
    tokens = [pack(name) for name in dict.fromkeys(names)]
    tokens += [b"\xd6\xff", b"\xd7\xff", b"\xc7\x0c\xff", b"\xc4\x10", b"\xdc\x00", b"\xde\x00", b"\xca", b"\xcb",
               b"\xcf", b"\xd3", b"\\u", b"e+", b"null", b"true"]
    return tokens


# MARK: Authority seeds (scripts; see `Step` in FuzzAuthority.swift)

COUNTER, PRIMES = 0, 1
IN_FLIGHT = {1: 0, 2: 1, 4: 2, 10_000: 3}


def header(kind, *fields):
    return pack([1, kind, *fields])


class Script:
    def __init__(self, app=COUNTER, in_flight=10_000):
        self.data = bytearray([app | IN_FLIGHT[in_flight] << 1])

    def frames(self, frames):
        self.data.append(len(frames))
        for frame in frames:
            assert len(frame) < 256, frame
            self.data.append(len(frame))
            self.data += frame

    def raw_client(self, frames, peer=0, delimiter=False):
        self.data += bytes([0, peer, 1 if delimiter else 0])
        self.frames(frames)
        return self

    def raw_worker(self, frames, peer=0):
        self.data += bytes([1, peer])
        self.frames(frames)
        return self

    def raw_header(self, header_frame, payload=None, to_worker=False):
        self.data += bytes([7, 1 if to_worker else 0, len(header_frame)]) + header_frame
        if payload is None:
            self.data.append(0)
        else:
            self.data += bytes([1, len(payload)]) + payload
        return self

    def action(self, client, seq_selector, action_selector):
        self.data += bytes([2, client, seq_selector, action_selector])
        return self

    def request(self, kind, request_id):
        self.data += bytes([3, kind, request_id])
        return self

    def ready(self, peer, flags=0):
        self.data += bytes([4, peer, flags])
        return self

    def report(self, peer, what, job_selector=0, index=0, payload=None):
        self.data += bytes([5, peer, what, job_selector, index])
        if what & 0x80 and (what % 6 in (0, 1) or (what % 6 == 2 and what & 0x40)):
            self.data += bytes([len(payload or b"")]) + (payload or b"")
        return self

    def restart(self):
        self.data += bytes([6, 0xFF])
        return self

    def tick(self, fifties, heartbeats=False):
        self.data += bytes([6, (fifties & 0x7F) | (0x80 if heartbeats else 0)])
        return self


def authority_seeds():
    count_up, count_up_async = pack(case("countUp")), pack(case("countUpAsync"))
    increase = pack(case("increase"))
    seeds = []

    # Client protocol, raw frames: action, resend, requests, REQ-style envelope.
    s = Script()
    s.raw_client([header("action", "c1", 1), count_up])
    s.raw_client([header("action", "c1", 1), count_up])
    s.raw_client([header("action", "c1", 2), count_up], delimiter=True)
    s.raw_client([header("ping", 7)]).raw_client([header("snapshot", 8)]).raw_client([header("stats", 9)])
    seeds.append(("client-protocol", s.data))

    # Worker protocol, raw frames: ready, a job, emit, duplicate emit, done, heartbeat, bye.
    s = Script()
    s.raw_worker([header("ready", "w0", "counter", 2, [])])
    s.raw_client([header("action", "c1", 1), count_up_async])
    s.raw_worker([header("emit", 1, 0, 0), increase]).raw_worker([header("emit", 1, 0, 0), increase])
    s.raw_worker([header("done", 1, 0, 1)]).raw_worker([header("heartbeat")]).raw_worker([header("bye")])
    seeds.append(("worker-protocol", s.data))

    # A done that carries the last mutation: after an emit, alone, resent, with a count of 0, and
    # from structured steps (bit 0x40 of `what`), as a worker does once the authority announced it.
    s = Script()
    s.raw_worker([header("ready", "w0", "counter", 4, ["slowIncrease"])]).tick(1, heartbeats=True)
    s.raw_client([header("action", "c1", 1), count_up_async]).raw_client([header("action", "c1", 2), count_up_async])
    s.raw_worker([header("emit", 1, 0, 0), increase]).raw_worker([header("done", 1, 0, 2), increase])
    s.raw_worker([header("done", 1, 0, 2), increase]).raw_worker([header("done", 2, 0, 0), increase])
    s.raw_worker([header("done", 2, 0, 1), increase])
    s.action(0, 2, 1).report(0, 0x44, 0, 1).report(0, 0x44, 0, 1)
    seeds.append(("done-with-emit", s.data))

    # A worker that reads `jobs` messages (it says so with `features`): a turn's jobs for it go
    # as one message; a new `ready` forgets it; malformed `features` are refused.
    s = Script()
    s.raw_worker([header("ready", "w0", "counter", 8, [])]).raw_worker([header("features", ["jobs"], 1024)])
    for seq in range(1, 4):
        s.raw_client([header("action", "c1", seq), count_up_async])
    s.raw_worker([header("done", 1, 0, 1), increase]).raw_worker([header("done", 2, 0, 1), increase])
    s.raw_worker([header("features", [1], 1024)]).raw_worker([header("features", ["jobs"])]).raw_worker([header("features", [], [])])
    s.raw_worker([header("ready", "w0", "counter", 8, [])]).raw_client([header("action", "c1", 4), count_up_async])
    seeds.append(("job-batches", s.data))

    # A client that reads `acks` messages (it says so with `features`), its actions and a
    # resend, another reply between them, one that stops asking, malformed requests, a REQ peer.
    s = Script()
    s.raw_client([header("features", 1, ["acks"])])
    for seq in range(1, 4):
        s.raw_client([header("action", "c1", seq), count_up])
    s.raw_client([header("action", "c1", 2), count_up]).raw_client([header("stats", 2)])
    s.raw_client([header("features", 3, [])]).raw_client([header("action", "c1", 4), count_up])
    s.raw_client([header("features", 4, [5])]).raw_client([header("features", 5)]).raw_client([header("features", 6, ["acks"], 1)])
    s.raw_client([header("features", 7, ["acks"])], delimiter=True)
    seeds.append(("ack-batches", s.data))

    # A worker's reports of a turn in one message (`report_batches`): an emit and its done, a
    # done with its mutation, a foreign job; then wrong shapes (the whole message refused).
    s = Script()
    s.raw_worker([header("ready", "w0", "counter", 8, [])])
    for seq in range(1, 4):
        s.raw_client([header("action", "c1", seq), count_up_async])
    s.raw_worker([header("reports", 4), pack([[2, 0, "emit", 0, increase], [2, 0, "done", 1, None],
                                                [1, 0, "done", 1, increase], [9, 0, "done", 1, increase]])])
    s.raw_worker([header("reports", 2), pack([[3, 0, "done", 1, increase]])])
    s.raw_worker([header("reports", 1), pack([[3, 0, "failed", 1, None]])])
    s.raw_worker([header("reports", 1), pack([[3, 0, "done", 0, increase]])])
    s.raw_worker([header("reports", 1), pack([[3, 0, "done", 1, increase]])])
    seeds.append(("report-batches", s.data))

    # Emits out of order are buffered, then released in order.
    s = Script()
    s.raw_worker([header("ready", "w0", "counter", 4, ["slowIncrease"])])
    s.raw_client([header("action", "c1", 1), count_up_async])
    s.raw_worker([header("emit", 1, 0, 2), increase]).raw_worker([header("emit", 1, 0, 1), increase])
    s.raw_worker([header("emit", 1, 0, 0), increase])
    s.raw_worker([header("done", 1, 0, 3)])
    seeds.append(("buffered-emits", s.data))

    # Refusals: garbage, wrong version, unknown kind, wrong shapes, bad action, empty frames.
    s = Script()
    for frames in ([b"\xc1"], [b"garbage"], [header("ping")], [pack([2, "ping", 1])], [header("explode")],
                   [header("action", "c", 5)], [header("action", "", 1), count_up], [header("action", "c", 0), count_up],
                   [header("action", "c", 1), pack(case("dance"))], [header("action", "c", 2), b"\x92\x01"],
                   [header("ping", 1), b"extra"], [pack({"not": "an array"})], [b""]):
        s.raw_client(frames)
    s.raw_client([])
    s.raw_header(header("action", "x" * 65, 1), count_up)
    seeds.append(("client-refusals", s.data))

    s = Script()
    s.raw_worker([header("heartbeat")], peer=1)
    s.raw_worker([header("ready", "w", "primes", 1, [])])
    s.raw_worker([header("ready", "w", "counter", 0, [])])
    s.raw_worker([header("ready", "w", "counter", 1, [])])
    s.raw_worker([header("emit", 1, 0, 0)])
    s.raw_worker([header("emit", 99, 0, 0), increase])
    s.raw_worker([header("done", 99, 0, 0)])
    s.raw_worker([header("failed", 1, 2**32, 1, "x")])
    s.raw_worker([header("emit", 1, 0, 0), b"\xc1"])
    s.raw_worker([b"\xc1"]).raw_worker([])
    s.raw_header(header("done", 1, 0, 0), to_worker=True)
    seeds.append(("worker-refusals", s.data))

    # Structured steps: workers, many actions, reports, a dead worker's jobs re-dispatched.
    s = Script()
    s.ready(0, 1).ready(1, 2)
    for i in range(6):
        s.action(i % 3, i, i)
    s.report(0, 0, 0, 0).report(0, 2, 0, 1).report(1, 0, 1, 0).report(1, 1, 1, 1)
    s.tick(70, heartbeats=True).ready(2, 3).tick(30).report(2, 0, 0, 0).report(2, 2, 0, 1)
    s.request(0, 1).request(2, 2)
    seeds.append(("structured-counter", s.data))

    # Stale resends: a far-ahead client_seq makes old ones stale.
    s = Script()
    s.action(0, 0, 0).action(0, 0x81, 0).action(0, 0, 0).action(0, 1, 0)
    seeds.append(("stale", s.data))

    # Busy: one action in flight per client.
    s = Script(in_flight=1)
    s.action(0, 0, 1).action(0, 1, 1).action(1, 0, 1).ready(0).report(0, 0).report(0, 2, 0, 1).action(0, 2, 1)
    seeds.append(("busy", s.data))

    # A job timeout and a worker that says bye with jobs outstanding.
    s = Script()
    s.ready(0, 3).ready(1, 3).action(0, 0, 1).action(0, 1, 1)
    for _ in range(3):
        s.tick(45).report(0, 4).report(1, 4)
    s.report(0, 5).report(1, 0).report(1, 2, 0, 1)
    seeds.append(("timeout-bye", s.data))

    # A restart from the checkpoint: dedup, applied emits and unreported jobs survive it.
    s = Script()
    s.raw_worker([header("ready", "w0", "counter", 2, [])])
    s.raw_client([header("action", "c1", 1), count_up_async]).raw_client([header("action", "c1", 2), count_up])
    s.raw_worker([header("emit", 1, 0, 0), increase])
    s.restart()
    s.raw_client([header("action", "c1", 1), count_up_async]).raw_worker([header("heartbeat")])
    s.raw_worker([header("ready", "w0", "counter", 2, [])])
    s.raw_worker([header("emit", 1, 0, 0), increase]).raw_worker([header("emit", 1, 0, 1), increase])
    s.raw_worker([header("done", 1, 0, 2)])
    seeds.append(("restart", s.data))

    # Primes: factor on a worker (several emits), the failure hook, an ordered lane, rogue reports.
    factor = pack(case("factor", n=12))
    s = Script(app=PRIMES)
    s.raw_worker([header("ready", "w0", "primes", 4, ["factorize"])])
    s.raw_client([header("action", "c1", 1), factor])
    s.raw_worker([header("emit", 1, 0, 0), pack(case("prime", n=12, factor=2))])
    s.raw_worker([header("emit", 1, 0, 1), pack(case("prime", n=12, factor=2))])
    s.raw_worker([header("emit", 1, 0, 2), pack(case("prime", n=12, factor=3))])
    s.raw_worker([header("emit", 1, 0, 3), pack(case("finished", n=12))])
    s.raw_worker([header("done", 1, 0, 4)])
    s.raw_client([header("action", "c1", 2), pack(case("factor", n=0))])
    s.raw_worker([header("failed", 2, 0, 3, "0 has no prime factorisation")])
    s.raw_client([header("action", "c1", 3), pack(case("factorInOrder", n=9, delayMs=0))])
    s.raw_client([header("action", "c1", 4), pack(case("factorInOrder", n=4, delayMs=0))])
    s.raw_worker([header("emit", 4, 0, 0), pack(case("prime", n=4, factor=2))])
    s.raw_worker([header("done", 4, 0, 1)])
    s.raw_worker([header("emit", 3, 0, 0), pack(case("prime", n=9, factor=3))])
    s.raw_worker([header("done", 3, 0, 1)])
    s.raw_client([header("snapshot", 1)])
    seeds.append(("primes", s.data))

    s = Script(app=PRIMES, in_flight=2)
    s.ready(0, 0x53).action(0, 0, 2).action(1, 0, 3).report(0, 0x80, 0, 0, payload=b"\x81\xa5prime\x80")
    s.report(0, 3, 0, 1).report(0, 1 | 8, 1, 0).report(0, 2, 1, 1).tick(5, heartbeats=True)
    seeds.append(("structured-primes", s.data))
    return seeds


def authority_tokens():
    kinds = ["action", "snapshot", "ping", "stats", "ready", "heartbeat", "emit", "done", "failed", "bye",
             "counter", "primes", "slowIncrease", "factorize"]
    tokens = [pack(kind) for kind in kinds]
    tokens += [pack([1, kind]) for kind in kinds]
    tokens += [pack(case(name)) for name in ("countUp", "countUpAsync", "increase")]
    tokens += [pack(case("factor", n=12)), pack(case("prime", n=12, factor=2)), pack(case("finished", n=12))]
    return tokens


if __name__ == "__main__":
    write_corpus("msgpack", msgpack_seeds())
    write_corpus("authority", authority_seeds())
    write_dict("msgpack", msgpack_tokens())
    write_dict("authority", authority_tokens())
