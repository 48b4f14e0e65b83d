#!/usr/bin/env python3
"""Checks MessagePack bytes produced by the Swift encoder with Python's
`msgpack` package.

Usage: python3 check_vectors.py VECTORS.json
VECTORS.json has the layout of vectors.json (name, hex, typed value; see
generate_vectors.py). Exit status 0 when every vector decodes to its value,
1 when any does not (each mismatch is printed), 2 on usage errors.
"""
import json
import math
import struct
import sys

import msgpack


def expected(tree):
    (kind, value), = tree.items()
    if kind == "nil":
        return None
    if kind == "bool":
        return value
    if kind in ("int", "uint"):
        return int(value)
    if kind == "float":
        return struct.unpack(">f", bytes.fromhex(value))[0]
    if kind == "double":
        return struct.unpack(">d", bytes.fromhex(value))[0]
    if kind == "str":
        return value
    if kind == "bin":
        return bytes.fromhex(value)
    if kind == "array":
        return [expected(v) for v in value]
    if kind == "map":
        return {freeze(expected(k)): expected(v) for k, v in value}
    if kind == "ext":
        return msgpack.ExtType(value["type"], bytes.fromhex(value["data"]))
    if kind == "timestamp":
        return msgpack.Timestamp(value["seconds"], value["nanoseconds"])
    raise ValueError("unknown kind " + kind)


def freeze(value):
    return tuple(value) if isinstance(value, list) else value


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as source:
        vectors = json.load(source)["vectors"]
    failures = 0
    for vector in vectors:
        try:
            decoded = msgpack.unpackb(bytes.fromhex(vector["hex"]), raw=False, strict_map_key=False,
                                      use_list=True)
        except Exception as error:  # report and continue with the next vector
            print("%s: python msgpack could not decode: %r" % (vector["name"], error))
            failures += 1
            continue
        want = expected(vector["value"])
        if isinstance(decoded, dict):
            decoded = {freeze(k): v for k, v in decoded.items()}
        if not same(decoded, want):
            print("%s: decoded %r, expected %r" % (vector["name"], decoded, want))
            failures += 1
    print("checked %d vectors, %d failed" % (len(vectors), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
