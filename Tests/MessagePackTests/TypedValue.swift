import Foundation
@testable import MessagePack

/// The typed JSON tree used by the fixture scripts (see generate_vectors.py),
/// converted to and from `MessagePackValue`.
struct TypedValue: Codable {
    var value: MessagePackValue

    init(_ value: MessagePackValue) { self.value = value }

    private struct Ext: Codable { var type: Int8; var data: String }
    private struct Time: Codable { var seconds: Int64; var nanoseconds: UInt32 }
    private enum Kind: String, CodingKey { case `nil`, bool, int, uint, float, double, str, bin, array, map, ext, timestamp }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Kind.self)
        guard let kind = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "empty typed value"))
        }
        switch kind {
        case .nil: value = .nil
        case .bool: value = .bool(try container.decode(Bool.self, forKey: kind))
        case .int: value = .int(Int64(try container.decode(String.self, forKey: kind)) ?? 0)
        case .uint: value = .uint(UInt64(try container.decode(String.self, forKey: kind)) ?? 0)
        case .float:
            value = .float(Float(bitPattern: UInt32(try container.decode(String.self, forKey: kind), radix: 16) ?? 0))
        case .double:
            value = .double(Double(bitPattern: UInt64(try container.decode(String.self, forKey: kind), radix: 16) ?? 0))
        case .str: value = .string(try container.decode(String.self, forKey: kind))
        case .bin: value = .binary(bytes(try container.decode(String.self, forKey: kind)))
        case .array: value = .array(try container.decode([TypedValue].self, forKey: kind).map(\.value))
        case .map: value = .map(try container.decode([[TypedValue]].self, forKey: kind).map { ($0[0].value, $0[1].value) })
        case .ext:
            let ext = try container.decode(Ext.self, forKey: kind)
            value = .extension(type: ext.type, data: bytes(ext.data))
        case .timestamp:
            let time = try container.decode(Time.self, forKey: kind)
            value = .timestamp(seconds: time.seconds, nanoseconds: time.nanoseconds)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Kind.self)
        switch value {
        case .nil: try container.encodeNil(forKey: .nil)
        case .bool(let v): try container.encode(v, forKey: .bool)
        case .int(let v): try container.encode(String(v), forKey: .int)
        case .uint(let v): try container.encode(String(v), forKey: .uint)
        case .float(let v): try container.encode(String(format: "%08x", v.bitPattern), forKey: .float)
        case .double(let v): try container.encode(String(format: "%016llx", v.bitPattern), forKey: .double)
        case .string(let v): try container.encode(v, forKey: .str)
        case .binary(let v): try container.encode(hex(v), forKey: .bin)
        case .array(let v): try container.encode(v.map(TypedValue.init), forKey: .array)
        case .map(let v): try container.encode(v.map { [TypedValue($0.key), TypedValue($0.value)] }, forKey: .map)
        case .extension(let type, let data): try container.encode(Ext(type: type, data: hex(data)), forKey: .ext)
        case .timestamp(let s, let n): try container.encode(Time(seconds: s, nanoseconds: n), forKey: .timestamp)
        }
    }
}
