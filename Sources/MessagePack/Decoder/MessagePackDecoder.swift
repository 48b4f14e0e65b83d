import Foundation

/// Decodes `Decodable` values from MessagePack, like Foundation's `JSONDecoder`.
///
/// msgpack-c unpacks the input into a `msgpack_object` tree (strings and
/// binaries by reference into the input); values are decoded straight from
/// that tree, without an intermediate Swift representation.
///
/// Accepted forms (see ``MessagePackEncoder`` for what is written):
/// - integers of any wire width into any integer type that holds the value
///   (otherwise `DecodingError.dataCorrupted`); into `Float`/`Double` when exact;
/// - float32 and float64 into `Double`; into `Float` when exact (NaN and ±∞ included);
/// - `String` from str, validated as UTF-8;
/// - `[UInt8]`/`Data` from bin (or an array of integers 0…255);
/// - `Date` from the timestamp extension -1 (timestamp32/64/96);
/// - `UUID` from a 16-byte bin or its canonical string form;
/// - structs from maps with string keys: duplicate keys, or keys that are not
///   strings (integer keys only where the `CodingKey` type accepts them),
///   are rejected; unknown string keys are ignored.
///
/// Malformed or hostile input (truncated, reserved byte 0xc1, declared sizes
/// beyond the input, nesting deeper than ``MessagePack/maximumNestingDepth``,
/// trailing bytes) throws `DecodingError.dataCorrupted`; nothing traps.
///
/// The `Decoder` an `init(from:)` is given and the containers it makes read the unpacked input in
/// place and share the call's state without retaining it: use them within that `init(from:)`, and
/// keep what they decoded, not them (a decoder kept beyond it answers only `codingPath`).
///
/// Small plain values (a trivially copyable type of at most 16 bytes, from at most 32 bytes of
/// input, such as an enum case without payload or with a number) are decoded through `Codable`
/// once per distinct input and thread, then remembered (see ``remembersPlainValues``).
public struct MessagePackDecoder: Sendable {
    /// Values made available to `init(from:)` implementations through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Whether a small plain value decoded once from the same bytes on the same thread is given
    /// again without running its `init(from:)` (default `true`; never with `userInfo`, nor for a
    /// ``CodedEachTime`` type, whose `init(from:)` does more than read its input).
    public var remembersPlainValues: Bool

    /// Creates a decoder.
    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:], remembersPlainValues: Bool = true) {
        self.userInfo = userInfo
        self.remembersPlainValues = remembersPlainValues
    }

    /// Decodes a `T` from exactly the bytes of `buffer`, without copying them
    /// (for example straight from a received ZeroMQ frame).
    public func decode<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer) throws -> T {
        guard remembersPlainValues, userInfo.isEmpty else { return try decodeOnce(type, from: buffer) }
        return try PlainValueMemo.decode(T.self, from: buffer) { try decodeOnce(type, from: buffer) }
    }

    /// Decodes a `T` through `Codable`.
    private func decodeOnce<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer) throws -> T {
        if userInfo.isEmpty, let kept = ThreadKept.take(from: DecodingContext.keptPerThread) {
            defer { kept.giveBack() }
            return try Self.decode(T.self, from: buffer, in: kept.state)
        }
        let context = DecodingContext(userInfo: userInfo)
        defer { context.tearDown() }
        return try Self.decode(T.self, from: buffer, in: context)
    }

    /// Unpacks `buffer` and decodes its root value as a `T` with `context`.
    private static func decode<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer, in context: DecodingContext) throws -> T {
        try MessagePackReader.withRoot(buffer) { root in
            try context.decodeValue(T.self, from: root, parent: nil, key: nil)
        }
    }

    /// Decodes a `T` from `bytes`.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, from: $0) }
    }

    /// Decodes a `T` from `data`.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try data.withUnsafeBytes { try decode(type, from: $0) }
    }
}
