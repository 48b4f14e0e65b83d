import CMsgPack

/// Conversions from one unpacked object to Swift scalars, with the checks
/// Codable requires: out-of-range integers and inexact floats throw instead
/// of trapping or rounding.
extension ObjectRef {
    typealias Path = () -> [any CodingKey]

    func mismatch(_ type: Any.Type, _ path: Path) -> DecodingError {
        .typeMismatch(type, .init(codingPath: path(), debugDescription: "Expected \(type), found \(kindDescription)."))
    }

    func notRepresentable(_ type: Any.Type, _ path: Path) -> DecodingError {
        .dataCorrupted(.init(codingPath: path(), debugDescription: "\(kindDescription) does not fit in \(type)."))
    }

    func decodeBool(_ path: Path) throws -> Bool {
        guard type == MSGPACK_OBJECT_BOOLEAN else { throw mismatch(Bool.self, path) }
        return boolean
    }

    @inline(__always)
    func decodeInteger<I: FixedWidthInteger>(_: I.Type, _ path: Path) throws -> I {
        if type == MSGPACK_OBJECT_POSITIVE_INTEGER {
            guard let value = I(exactly: unsigned) else { throw notRepresentable(I.self, path) }
            return value
        }
        if type == MSGPACK_OBJECT_NEGATIVE_INTEGER {
            guard let value = I(exactly: signed) else { throw notRepresentable(I.self, path) }
            return value
        }
        throw mismatch(I.self, path)
    }

    /// float32 and float64 decode exactly; integers decode when exactly representable.
    func decodeDouble(_ path: Path) throws -> Double {
        switch type {
        case MSGPACK_OBJECT_FLOAT64, MSGPACK_OBJECT_FLOAT32:
            return double
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            guard let value = Double(exactly: unsigned) else { throw notRepresentable(Double.self, path) }
            return value
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            guard let value = Double(exactly: signed) else { throw notRepresentable(Double.self, path) }
            return value
        default:
            throw mismatch(Double.self, path)
        }
    }

    /// float32 decodes exactly; a float64 only if `Float` holds it exactly
    /// (NaN and the infinities included); integers when exactly representable.
    func decodeFloat(_ path: Path) throws -> Float {
        switch type {
        case MSGPACK_OBJECT_FLOAT32:
            return Float(double)
        case MSGPACK_OBJECT_FLOAT64:
            let value = double
            if value.isNaN { return .nan }
            guard let exact = Float(exactly: value) else { throw notRepresentable(Float.self, path) }
            return exact
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            guard let value = Float(exactly: unsigned) else { throw notRepresentable(Float.self, path) }
            return value
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            guard let value = Float(exactly: signed) else { throw notRepresentable(Float.self, path) }
            return value
        default:
            throw mismatch(Float.self, path)
        }
    }

    /// A `str`, validated as UTF-8.
    func decodeString(_ path: Path) throws -> String {
        guard type == MSGPACK_OBJECT_STR else { throw mismatch(String.self, path) }
        guard let value = validatedString else {
            throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "String is not valid UTF-8."))
        }
        return value
    }

    /// `bin` (or, for data from other producers, an array of integers 0…255).
    func decodeBytes(_ path: Path) throws -> [UInt8] {
        if type == MSGPACK_OBJECT_BIN { return [UInt8](binaryBytes) }
        guard type == MSGPACK_OBJECT_ARRAY else { throw mismatch([UInt8].self, path) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(arrayCount)
        for index in 0 ..< arrayCount {
            bytes.append(try element(index).decodeInteger(UInt8.self) {
                path() + [MessagePackKey.index(index)]
            })
        }
        return bytes
    }

    /// The timestamp extension (-1) in any of its three sizes.
    func decodeTimestamp(as target: Any.Type, _ path: Path) throws -> msgpack_timestamp {
        guard type == MSGPACK_OBJECT_EXT, extensionType == MessagePack.timestampExtensionType else {
            throw mismatch(target, path)
        }
        guard let value = timestamp, value.tv_nsec < 1_000_000_000 else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: path(),
                debugDescription: "Malformed timestamp extension of \(extensionBytes.count) bytes."))
        }
        return value
    }
}
