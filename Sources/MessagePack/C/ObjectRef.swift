import CMsgPack

/// A read-only view of one `msgpack_object` inside an unpacked tree.
///
/// The tree lives in the zone `MessagePackReader.withRoot` unpacks into; strings,
/// binaries and extension payloads point into the input buffer (msgpack-c
/// unpacks them by reference). An `ObjectRef` is therefore only valid while
/// both that zone and the input buffer are alive, which the decoder
/// guarantees by scoping all use inside `MessagePackReader.withRoot`.
struct ObjectRef {
    let pointer: UnsafePointer<msgpack_object>

    @inline(__always) init(_ pointer: UnsafePointer<msgpack_object>) { self.pointer = pointer }

    @inline(__always) var type: msgpack_object_type { pointer.pointee.type }
    @inline(__always) var isNil: Bool { type == MSGPACK_OBJECT_NIL }
    @inline(__always) var isString: Bool { type == MSGPACK_OBJECT_STR }
    @inline(__always) var isMap: Bool { type == MSGPACK_OBJECT_MAP }
    @inline(__always) var isArray: Bool { type == MSGPACK_OBJECT_ARRAY }

    @inline(__always) var boolean: Bool { pointer.pointee.via.boolean }
    @inline(__always) var unsigned: UInt64 { pointer.pointee.via.u64 }
    @inline(__always) var signed: Int64 { pointer.pointee.via.i64 }
    @inline(__always) var double: Double { pointer.pointee.via.f64 }

    // MARK: Arrays

    @inline(__always) var arrayCount: Int { Int(pointer.pointee.via.array.size) }

    @inline(__always) func element(_ index: Int) -> ObjectRef {
        ObjectRef(UnsafePointer(pointer.pointee.via.array.ptr + index))
    }

    // MARK: Maps

    @inline(__always) var mapCount: Int { Int(pointer.pointee.via.map.size) }

    @inline(__always) func key(_ index: Int) -> ObjectRef {
        let entry = pointer.pointee.via.map.ptr + index
        return ObjectRef(UnsafeRawPointer(entry).assumingMemoryBound(to: msgpack_object.self))
    }

    @inline(__always) func value(_ index: Int) -> ObjectRef {
        // msgpack_object_kv is { msgpack_object key; msgpack_object val; }:
        // the value is the object right after the key.
        let entry = pointer.pointee.via.map.ptr + index
        return ObjectRef(UnsafeRawPointer(entry).assumingMemoryBound(to: msgpack_object.self) + 1)
    }

    // MARK: Raw payloads (by reference into the input)

    /// The UTF-8 bytes of a `str` object (not validated).
    @inline(__always) var stringBytes: UnsafeRawBufferPointer {
        let str = pointer.pointee.via.str
        return UnsafeRawBufferPointer(start: str.ptr, count: Int(str.size))
    }

    /// The payload of a `bin` object.
    @inline(__always) var binaryBytes: UnsafeRawBufferPointer {
        let bin = pointer.pointee.via.bin
        return UnsafeRawBufferPointer(start: bin.ptr, count: Int(bin.size))
    }

    @inline(__always) var extensionType: Int8 { pointer.pointee.via.ext.type }

    @inline(__always) var extensionBytes: UnsafeRawBufferPointer {
        let ext = pointer.pointee.via.ext
        return UnsafeRawBufferPointer(start: ext.ptr, count: Int(ext.size))
    }

    /// The timestamp this object holds, if it is a well-formed extension -1
    /// (timestamp32/64/96), decoded by msgpack-c's `msgpack_object_to_timestamp`.
    var timestamp: msgpack_timestamp? {
        var result = msgpack_timestamp()
        guard msgpack_object_to_timestamp(pointer, &result) else { return nil }
        return result
    }

    // MARK: Comparison helpers

    /// Whether this is a `str` whose bytes equal `utf8`.
    @inline(__always) func stringEquals(_ utf8: UnsafeRawBufferPointer) -> Bool {
        guard type == MSGPACK_OBJECT_STR else { return false }
        let str = pointer.pointee.via.str
        guard Int(str.size) == utf8.count else { return false }
        guard utf8.count > 0, let lhs = str.ptr, let rhs = utf8.baseAddress else { return true }
        return Self.bytesEqual(UnsafeRawPointer(lhs), rhs, count: utf8.count)
    }

    /// Whether `count` (at least 1) bytes at `left` and `right` are equal.
    ///
    /// Keys are short, so no call to `memcmp`: eight bytes at a time, and what is left (or a
    /// key shorter than eight bytes) as two loads that may overlap, each within the `count`
    /// bytes: the first and last four bytes of a key of four to seven, the first and last two of
    /// one of two or three. A byte at a time took six instructions per byte.
    @inline(__always) static func bytesEqual(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, count: Int) -> Bool {
        if count >= 8 {
            var offset = 0
            while offset + 8 <= count {
                guard left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    == right.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
                offset += 8
            }
            return offset == count || left.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                == right.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        }
        if count >= 4 {
            return left.loadUnaligned(as: UInt32.self) == right.loadUnaligned(as: UInt32.self)
                && left.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                == right.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        }
        if count >= 2 {
            return left.loadUnaligned(as: UInt16.self) == right.loadUnaligned(as: UInt16.self)
                && left.loadUnaligned(fromByteOffset: count - 2, as: UInt16.self)
                == right.loadUnaligned(fromByteOffset: count - 2, as: UInt16.self)
        }
        return left.load(as: UInt8.self) == right.load(as: UInt8.self)
    }

    /// The string value, validated as UTF-8; `nil` when the bytes are not valid UTF-8.
    var validatedString: String? {
        let bytes = stringBytes
        // ASCII (the common case for keys and names) is valid UTF-8 and takes
        // the stdlib's fast path; anything else is validated strictly.
        if Self.isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether every byte of `bytes` is below 0x80: eight bytes at a time, and what is left (or
    /// a string shorter than eight bytes) as two loads that may overlap, as in ``bytesEqual``.
    @inline(__always)
    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count > 0, let start = bytes.baseAddress else { return true }
        if count >= 8 {
            var index = 0
            while index + 8 <= count {
                if start.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
                index += 8
            }
            return index == count || start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
        }
        if count >= 4 {
            return (start.loadUnaligned(as: UInt32.self) | start.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)) & 0x8080_8080 == 0
        }
        if count >= 2 {
            return (start.loadUnaligned(as: UInt16.self) | start.loadUnaligned(fromByteOffset: count - 2, as: UInt16.self)) & 0x8080 == 0
        }
        return start.load(as: UInt8.self) & 0x80 == 0
    }

    /// A short human-readable name of the wire type, used in error messages.
    var kindDescription: String {
        switch type {
        case MSGPACK_OBJECT_NIL: return "nil"
        case MSGPACK_OBJECT_BOOLEAN: return "bool"
        case MSGPACK_OBJECT_POSITIVE_INTEGER: return "unsigned integer \(unsigned)"
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "negative integer \(signed)"
        case MSGPACK_OBJECT_FLOAT32: return "float32 \(Float(double))"
        case MSGPACK_OBJECT_FLOAT64: return "float64 \(double)"
        case MSGPACK_OBJECT_STR: return "string"
        case MSGPACK_OBJECT_BIN: return "binary"
        case MSGPACK_OBJECT_ARRAY: return "array"
        case MSGPACK_OBJECT_MAP: return "map"
        case MSGPACK_OBJECT_EXT: return "extension \(extensionType)"
        default: return "unknown object type \(type.rawValue)"
        }
    }
}
