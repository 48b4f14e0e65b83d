import CMsgPack

/// `MessagePackValue` is `Codable`. With ``MessagePackEncoder`` and
/// ``MessagePackDecoder`` it is transparent: it encodes to exactly the bytes
/// of the value it holds and decodes any value. With other coders (JSON, …)
/// it maps onto their generic containers.
extension MessagePackValue: Codable {
    public func encode(to encoder: any Encoder) throws {
        if let node = encoder as? EncoderNode {
            var container = node.singleValueContainer()
            try container.encode(self)
            return
        }
        switch self {
        case .nil:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value): var container = encoder.singleValueContainer(); try container.encode(value)
        case .int(let value): var container = encoder.singleValueContainer(); try container.encode(value)
        case .uint(let value): var container = encoder.singleValueContainer(); try container.encode(value)
        case .float(let value): var container = encoder.singleValueContainer(); try container.encode(value)
        case .double(let value): var container = encoder.singleValueContainer(); try container.encode(value)
        case .string(let value): var container = encoder.singleValueContainer(); try container.encode(value)
        case .binary(let value): var container = encoder.singleValueContainer(); try container.encode(value)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .map(let entries):
            var container = encoder.container(keyedBy: MessagePackKey.self)
            for entry in entries {
                try container.encode(entry.value, forKey: .string(entry.key.jsonKeyName()))
            }
        case .extension(let type, let data):
            var container = encoder.container(keyedBy: MessagePackKey.self)
            try container.encode(type, forKey: .string("type"))
            try container.encode(data, forKey: .string("data"))
        case .timestamp(let seconds, let nanoseconds):
            var container = encoder.container(keyedBy: MessagePackKey.self)
            try container.encode(seconds, forKey: .string("seconds"))
            try container.encode(nanoseconds, forKey: .string("nanoseconds"))
        }
    }

    public init(from decoder: any Decoder) throws {
        if let native = decoder as? DecoderImpl {
            self = try MessagePackValue(object: native.object) { native.codingPath }
            return
        }
        if let container = try? decoder.singleValueContainer() {
            if container.decodeNil() { self = .nil; return }
            if let value = try? container.decode(Bool.self) { self = .bool(value); return }
            if let value = try? container.decode(Int64.self) { self = .int(value); return }
            if let value = try? container.decode(UInt64.self) { self = .uint(value); return }
            if let value = try? container.decode(Double.self) { self = .double(value); return }
            if let value = try? container.decode(String.self) { self = .string(value); return }
        }
        if let container = try? decoder.container(keyedBy: MessagePackKey.self) {
            self = .map(try container.allKeys.map { (.string($0.stringValue), try container.decode(MessagePackValue.self, forKey: $0)) })
            return
        }
        var container = try decoder.unkeyedContainer()
        var elements: [MessagePackValue] = []
        while !container.isAtEnd { elements.append(try container.decode(MessagePackValue.self)) }
        self = .array(elements)
    }
}

extension MessagePackValue {
    /// Builds a value from an unpacked msgpack-c object tree. Strings must be valid UTF-8.
    init(object: ObjectRef, path: ObjectRef.Path) throws {
        switch object.type {
        case MSGPACK_OBJECT_STR:
            self = .string(try object.decodeString(path))
        case MSGPACK_OBJECT_ARRAY:
            var elements: [MessagePackValue] = []
            elements.reserveCapacity(object.arrayCount)
            for index in 0 ..< object.arrayCount {
                elements.append(try MessagePackValue(object: object.element(index)) {
                    path() + [MessagePackKey.index(index)]
                })
            }
            self = .array(elements)
        case MSGPACK_OBJECT_MAP:
            var entries: [(key: MessagePackValue, value: MessagePackValue)] = []
            entries.reserveCapacity(object.mapCount)
            for index in 0 ..< object.mapCount {
                let key = try MessagePackValue(object: object.key(index)) { path() + [MessagePackKey.index(index)] }
                let value = try MessagePackValue(object: object.value(index)) {
                    path() + [MessagePackKey.string(key.jsonKeyName())]
                }
                entries.append((key, value))
            }
            self = .map(entries)
        default:
            self = MessagePackValue(scalar: object)
        }
    }
}
