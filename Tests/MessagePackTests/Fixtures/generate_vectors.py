#!/usr/bin/env python3
"""Generates vectors.json: MessagePack bytes produced by Python's `msgpack`
package, with the value each one holds, for the Swift decoder tests.

Run from anywhere:  python3 generate_vectors.py
The output is committed; regenerate it only when adding vectors.
The 32-bit length forms (str32, bin32, array32, map32, ext32) need more than
64 KiB of payload each; they are covered by exact-byte tests in Swift instead
of bloating this file.

Expected values use a typed JSON tree so that integer signedness, float
width, binary and extension types survive JSON:
  {"nil": null} {"bool": b} {"int": "-5"} {"uint": "5"}
  {"float": "<float32 bits hex>"} {"double": "<float64 bits hex>"}
  {"str": s} {"bin": "<hex>"} {"array": [...]} {"map": [[k, v], ...]}
  {"ext": {"type": n, "data": "<hex>"}} {"timestamp": {"seconds": s, "nanoseconds": n}}
"""
import json
import os
import struct

import msgpack


def typed(value, single_float=False):
    if value is None:
        return {"nil": None}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": str(value)} if value < 0 else {"uint": str(value)}
    if isinstance(value, float):
        if single_float:
            return {"float": struct.pack(">f", value).hex()}
        return {"double": struct.pack(">d", value).hex()}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, (bytes, bytearray)):
        return {"bin": bytes(value).hex()}
    # ExtType is a tuple: test it before sequences.
    if isinstance(value, msgpack.Timestamp):
        return {"timestamp": {"seconds": value.seconds, "nanoseconds": value.nanoseconds}}
    if isinstance(value, msgpack.ExtType):
        return {"ext": {"type": value.code, "data": value.data.hex()}}
    if isinstance(value, (list, tuple)):
        return {"array": [typed(v, single_float) for v in value]}
    if isinstance(value, dict):
        return {"map": [[typed(k, single_float), typed(v, single_float)] for k, v in value.items()]}
    raise TypeError(type(value))


def snapshot():
    return {
        "version": 3,
        "counter": -42,
        "items": [{"id": i, "name": "item-%011d" % i, "done": i % 2 == 0} for i in range(3)],
    }


CASES = [
    ("nil", None), ("true", True), ("false", False),
    ("positive fixint 0", 0), ("positive fixint 127", 127),
    ("negative fixint -1", -1), ("negative fixint -32", -32),
    ("uint8 128", 128), ("uint8 255", 255), ("uint16 256", 256), ("uint16 65535", 65535),
    ("uint32 65536", 65536), ("uint32 max", 2**32 - 1), ("uint64 2^32", 2**32), ("uint64 max", 2**64 - 1),
    ("int8 -33", -33), ("int8 min", -128), ("int16 -129", -129), ("int16 min", -32768),
    ("int32 -32769", -32769), ("int32 min", -2**31), ("int64 -2^31-1", -2**31 - 1), ("int64 min", -2**63),
    ("float64 1.5", 1.5), ("float64 -0.0", -0.0), ("float64 inf", float("inf")), ("float64 nan", float("nan")),
    ("fixstr empty", ""), ("fixstr ascii", "hello"), ("fixstr utf8", "h\u00e9\u6f22\U0001F600"),
    ("str8", "a" * 32), ("str16", "b" * 256),
    ("bin8", b"\x00\x01\xff"), ("bin16", bytes(range(256)) * 2),
    ("fixarray", [1, "two", None]), ("array16", list(range(16))),
    ("fixmap", {"a": 1, "b": [True]}), ("map16", {"k%02d" % i: i for i in range(16)}),
    ("int keys", {1: "one", -2: "minus two"}),
    ("fixext1", msgpack.ExtType(5, b"\x01")), ("fixext2", msgpack.ExtType(5, b"\x01\x02")),
    ("fixext4", msgpack.ExtType(5, b"\x01\x02\x03\x04")), ("fixext8", msgpack.ExtType(5, bytes(8))),
    ("fixext16", msgpack.ExtType(127, bytes(range(16)))), ("ext8", msgpack.ExtType(5, b"x" * 3)),
    ("ext16", msgpack.ExtType(10, b"y" * 256)),
    ("timestamp32", msgpack.Timestamp(1700000000, 0)),
    ("timestamp64", msgpack.Timestamp(1700000000, 500000000)),
    ("timestamp96", msgpack.Timestamp(-1, 999999999)),
    ("snapshot", snapshot()),
]

SINGLE_FLOAT_CASES = [("float32 1.5", 1.5), ("float32 -2.25", -2.25), ("float32 inf", float("-inf"))]


def main():
    vectors = []
    for name, value in CASES:
        vectors.append({"name": name, "hex": msgpack.packb(value).hex(), "value": typed(value)})
    for name, value in SINGLE_FLOAT_CASES:
        vectors.append({"name": name, "hex": msgpack.packb(value, use_single_float=True).hex(),
                        "value": typed(value, single_float=True)})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.json")
    with open(path, "w") as out:
        json.dump({"generator": "python msgpack " + ".".join(map(str, msgpack.version)), "vectors": vectors},
                  out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
