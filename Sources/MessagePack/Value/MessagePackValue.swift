import CMsgPack

/// Any MessagePack value, as a Swift enum.
///
/// Used where the shape is not known statically: the CLI turns JSON text into
/// actions and prints snapshots as JSON through it. It is `Codable` and passes
/// through ``MessagePackEncoder``/``MessagePackDecoder`` transparently: a
/// `MessagePackValue` field encodes to exactly the bytes of the value it holds.
public enum MessagePackValue: Sendable, Hashable {
    case `nil`
    case bool(Bool)
    /// A signed integer. Non-negative values are packed in the unsigned forms
    /// (as msgpack-c does), so they unpack as ``uint(_:)``.
    case int(Int64)
    case uint(UInt64)
    case float(Float)
    case double(Double)
    case string(String)
    case binary([UInt8])
    case array([MessagePackValue])
    /// A map as an ordered list of entries; order is preserved when packing.
    case map([(key: MessagePackValue, value: MessagePackValue)])
    /// An application-defined extension. Type -1 is the timestamp, see ``timestamp(seconds:nanoseconds:)``.
    case `extension`(type: Int8, data: [UInt8])
    /// A timestamp (extension type -1): seconds since 1970-01-01T00:00:00Z plus nanoseconds (< 10⁹).
    case timestamp(seconds: Int64, nanoseconds: UInt32)

    /// Packs this value with msgpack-c, each part in its smallest form.
    public func pack() -> [UInt8] {
        let writer = MessagePackWriter()
        pack(into: writer)
        return writer.bytes
    }

    /// Unpacks exactly one value filling all of `bytes`.
    /// - Throws: `DecodingError.dataCorrupted` for malformed or hostile input.
    public init(unpacking bytes: [UInt8]) throws {
        self = try bytes.withUnsafeBytes { try MessagePackReader.read($0) }
    }

    /// Unpacks exactly one value filling all of `buffer` (no copy of the input).
    public init(unpacking buffer: UnsafeRawBufferPointer) throws {
        self = try MessagePackReader.read(buffer)
    }

    /// Appends this value to `writer`.
    public func pack(into writer: MessagePackWriter) {
        switch self {
        case .nil: writer.packNil()
        case .bool(let value): writer.packBool(value)
        case .int(let value): writer.packInt(value)
        case .uint(let value): writer.packUInt(value)
        case .float(let value): writer.packFloat(value)
        case .double(let value): writer.packDouble(value)
        case .string(let value): writer.packString(value)
        case .binary(let value): writer.packBinary(value)
        case .array(let elements):
            writer.packArrayHeader(elements.count)
            for element in elements { element.pack(into: writer) }
        case .map(let entries):
            writer.packMapHeader(entries.count)
            for entry in entries {
                entry.key.pack(into: writer)
                entry.value.pack(into: writer)
            }
        case .extension(let type, let data): writer.packExtension(type: type, data: data)
        case .timestamp(let seconds, let nanoseconds):
            writer.packTimestamp(seconds: seconds, nanoseconds: min(nanoseconds, 999_999_999))
        }
    }

    /// Builds a non-container value (containers and strings are handled by
    /// the throwing `init(object:path:)`, which validates UTF-8).
    init(scalar object: ObjectRef) {
        switch object.type {
        case MSGPACK_OBJECT_BOOLEAN: self = .bool(object.boolean)
        case MSGPACK_OBJECT_POSITIVE_INTEGER: self = .uint(object.unsigned)
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: self = .int(object.signed)
        case MSGPACK_OBJECT_FLOAT32: self = .float(Float(object.double))
        case MSGPACK_OBJECT_FLOAT64: self = .double(object.double)
        case MSGPACK_OBJECT_BIN: self = .binary([UInt8](object.binaryBytes))
        case MSGPACK_OBJECT_EXT:
            if object.extensionType == MessagePack.timestampExtensionType, let time = object.timestamp,
               time.tv_nsec < 1_000_000_000 {
                self = .timestamp(seconds: time.tv_sec, nanoseconds: time.tv_nsec)
            } else {
                self = .extension(type: object.extensionType, data: [UInt8](object.extensionBytes))
            }
        default: self = .nil
        }
    }
}

extension MessagePackValue {
    public static func == (lhs: MessagePackValue, rhs: MessagePackValue) -> Bool {
        switch (lhs, rhs) {
        case (.nil, .nil): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.uint(a), .uint(b)): return a == b
        case let (.float(a), .float(b)): return a.bitPattern == b.bitPattern || a == b
        case let (.double(a), .double(b)): return a.bitPattern == b.bitPattern || a == b
        case let (.string(a), .string(b)): return a == b
        case let (.binary(a), .binary(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.map(a), .map(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case let (.extension(t1, d1), .extension(t2, d2)): return t1 == t2 && d1 == d2
        case let (.timestamp(s1, n1), .timestamp(s2, n2)): return s1 == s2 && n1 == n2
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .nil: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .int(let value): hasher.combine(value)
        case .uint(let value): hasher.combine(value)
        // Equal values hash equally: 0.0 == -0.0, so both zeros hash as +0.
        case .float(let value): hasher.combine(value == 0 ? Float(0).bitPattern : value.bitPattern)
        case .double(let value): hasher.combine(value == 0 ? Double(0).bitPattern : value.bitPattern)
        case .string(let value): hasher.combine(value)
        case .binary(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .map(let entries):
            hasher.combine(entries.count)
            for entry in entries { hasher.combine(entry.key); hasher.combine(entry.value) }
        case .extension(let type, let data): hasher.combine(type); hasher.combine(data)
        case .timestamp(let seconds, let nanoseconds): hasher.combine(seconds); hasher.combine(nanoseconds)
        }
    }
}
