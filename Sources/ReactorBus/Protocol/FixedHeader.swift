/// Hand-written MessagePack for the fixed headers every action, ack, job, emit, done and feed
/// snapshot carries: a few unsigned integers and short strings in a known order.
///
/// These headers are the per-message cost of the protocol, so they skip the general path
/// (unpacking into ``MessagePack/MessagePackValue`` trees, or a writer driven by closures):
///
/// - writing produces exactly the bytes msgpack-c's packer does (smallest integer and string
///   forms), so peers and tests see no difference;
/// - reading accepts only a header that is exactly of the expected shape and returns `nil` for
///   anything else, so the general path still parses (and explains) every unusual or broken
///   header, and the fast path never accepts what the general path would refuse.
enum FixedHeader {
    // MARK: Writing

    /// `[1, kind, fields...]` where every field is an unsigned integer.
    static func header(_ kind: StaticString, _ fields: UInt64...) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + kind.utf8CodeUnitCount + 9 * fields.count)
        bytes.append(0x90 | UInt8(2 + fields.count))
        bytes.append(UInt8(wireProtocolVersion))
        appendString(kind, to: &bytes)
        for field in fields { appendUInt(field, to: &bytes) }
        return bytes
    }

    /// `[1, "action", client_id, client_seq]`.
    static func action(clientID: String, seq: UInt64) -> [UInt8] {
        var bytes: [UInt8] = [0x94, UInt8(wireProtocolVersion)]
        bytes.reserveCapacity(20 + clientID.utf8.count)
        appendString("action", to: &bytes)
        var clientID = clientID
        clientID.withUTF8 { appendString(UnsafeRawBufferPointer($0), to: &bytes) }
        appendUInt(seq, to: &bytes)
        return bytes
    }

    /// `[1, "job", action_seq, effect_index, kind]`.
    static func job(actionSeq: UInt64, effectIndex: UInt32, kind: String) -> [UInt8] {
        var bytes: [UInt8] = [0x95, UInt8(wireProtocolVersion)]
        bytes.reserveCapacity(24 + kind.utf8.count)
        appendString("job", to: &bytes)
        appendUInt(actionSeq, to: &bytes)
        appendUInt(UInt64(effectIndex), to: &bytes)
        var kind = kind
        kind.withUTF8 { appendString(UnsafeRawBufferPointer($0), to: &bytes) }
        return bytes
    }

    /// A feed header `[1, fields...]` of unsigned integers (the topic is its own frame).
    static func feed(_ fields: UInt64...) -> [UInt8] {
        var bytes: [UInt8] = [0x90 | UInt8(1 + fields.count), UInt8(wireProtocolVersion)]
        bytes.reserveCapacity(2 + 9 * fields.count)
        for field in fields { appendUInt(field, to: &bytes) }
        return bytes
    }

    @inline(__always)
    static func appendUInt(_ value: UInt64, to bytes: inout [UInt8]) {
        switch value {
        case 0...0x7f:
            bytes.append(UInt8(value))
        case 0x80...0xff:
            bytes.append(0xcc)
            bytes.append(UInt8(value))
        case 0x100...0xffff:
            bytes.append(0xcd)
            appendBigEndian(UInt16(value), to: &bytes)
        case 0x1_0000...0xffff_ffff:
            bytes.append(0xce)
            appendBigEndian(UInt32(value), to: &bytes)
        default:
            bytes.append(0xcf)
            appendBigEndian(value, to: &bytes)
        }
    }

    @inline(__always)
    private static func appendBigEndian<I: FixedWidthInteger>(_ value: I, to bytes: inout [UInt8]) {
        var big = value.bigEndian
        withUnsafeBytes(of: &big) { bytes.append(contentsOf: $0) }
    }

    private static func appendString(_ text: StaticString, to bytes: inout [UInt8]) {
        appendString(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount), to: &bytes)
    }

    private static func appendString(_ utf8: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        let count = utf8.count
        switch count {
        case 0..<32:
            bytes.append(0xa0 | UInt8(count))
        case 32..<0x100:
            bytes.append(0xd9)
            bytes.append(UInt8(count))
        case 0x100..<0x1_0000:
            bytes.append(0xda)
            appendBigEndian(UInt16(count), to: &bytes)
        default:
            bytes.append(0xdb)
            appendBigEndian(UInt32(count), to: &bytes)
        }
        bytes.append(contentsOf: utf8)
    }
}

/// Reads one fixed-shape header; every method returns `nil` (or `false`) as soon as the bytes
/// are not what the shape needs, and the caller falls back to the general parser.
struct FixedHeaderReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether every byte was read (a header with trailing bytes is not of the shape).
    var isAtEnd: Bool { position == bytes.count }

    /// Reads `[1, kind` of an array of exactly `count` elements (a fixarray).
    mutating func start(count: Int, kind: StaticString) -> Bool {
        guard count < 16, byte() == 0x90 | UInt8(count), byte() == UInt8(wireProtocolVersion) else { return false }
        let length = kind.utf8CodeUnitCount
        guard length < 32, byte() == 0xa0 | UInt8(length), bytes.count - position >= length else { return false }
        for offset in 0..<length where bytes[position + offset] != kind.utf8Start[offset] { return false }
        position += length
        return true
    }

    /// Reads `[1` of a feed header of exactly `count` elements.
    mutating func startFeed(count: Int) -> Bool {
        count < 16 && byte() == 0x90 | UInt8(count) && byte() == UInt8(wireProtocolVersion)
    }

    /// An unsigned integer in any of MessagePack's unsigned forms.
    mutating func uint() -> UInt64? {
        guard let first = byte() else { return nil }
        switch first {
        case 0x00...0x7f: return UInt64(first)
        case 0xcc: return bigEndian(1)
        case 0xcd: return bigEndian(2)
        case 0xce: return bigEndian(4)
        case 0xcf: return bigEndian(8)
        default: return nil
        }
    }

    /// An unsigned integer that fits 32 bits.
    mutating func uint32() -> UInt32? {
        uint().flatMap { UInt32(exactly: $0) }
    }

    /// A string of valid UTF-8 of 1 to `maxBytes` bytes (fixstr or str8).
    mutating func string(maxBytes: Int) -> String? {
        guard let first = byte() else { return nil }
        let length: Int
        switch first {
        case 0xa0...0xbf: length = Int(first & 0x1f)
        case 0xd9:
            guard let size = byte() else { return nil }
            length = Int(size)
        default: return nil
        }
        guard length >= 1, length <= maxBytes, bytes.count - position >= length else { return nil }
        let text = bytes[position..<position + length].withUnsafeBufferPointer { utf8 -> String? in
            // Ids and kinds are ASCII in practice, which is valid UTF-8 without a validation pass.
            utf8.allSatisfy { $0 < 0x80 } ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
        }
        position += length
        return text
    }

    @inline(__always)
    private mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func bigEndian(_ width: Int) -> UInt64? {
        guard bytes.count - position >= width else { return nil }
        var value: UInt64 = 0
        for offset in 0..<width { value = value << 8 | UInt64(bytes[position + offset]) }
        position += width
        return value
    }
}
