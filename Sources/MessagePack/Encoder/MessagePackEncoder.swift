/// Encodes `Encodable` values as MessagePack, like Foundation's `JSONEncoder`.
///
/// Mapping:
/// - `Bool`, every integer width (smallest wire form), `Float` (float32),
///   `Double` (float64), `String` (str), `nil` (nil).
/// - `[UInt8]` and `Data` as bin; `Date` as the timestamp extension (type -1,
///   smallest of timestamp32/64/96); `UUID` as a 16-byte bin.
/// - Structs and classes as maps with string keys in encode (declaration)
///   order; arrays as arrays; enums as Swift synthesises them
///   (`{"case": {…}}`).
/// - `Dictionary` with `String` keys as maps with string keys, with `Int`
///   keys as maps with integer keys. With ``sortKeys`` (the default) keys are
///   written in ascending order so equal dictionaries encode to equal bytes.
/// - ``MessagePackValue`` as exactly the value it holds.
///
/// The struct is a cheap, `Sendable` configuration value; each `encode` call
/// uses buffers of its own while it runs, taken from and given back to its
/// thread's spares (`ThreadWriterPool`), so encoding small values one after
/// another allocates no buffer; a call without `userInfo` also takes its thread's
/// kept coding state (`ThreadKept`) when no other call on the thread holds it.
/// Small plain values (a trivially copyable type of at most 16 bytes, such as an
/// enum case without payload or with a number) are encoded through `Codable`
/// once per distinct value and thread by ``encode(_:)``, then remembered (see
/// ``remembersPlainValues``).
public struct MessagePackEncoder: Sendable {
    /// Write dictionary keys in ascending order (String: by `<`, Int: numerically,
    /// other key types: by their encoded bytes). Defaults to `true` so that
    /// snapshots can be compared and checksummed byte for byte. Struct keys
    /// always keep their encode order.
    public var sortKeys: Bool

    /// Values made available to `encode(to:)` implementations through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Whether ``encode(_:)`` gives the bytes of a small plain value it encoded before on the same
    /// thread without running its `encode(to:)` again (default `true`; never with `userInfo`, nor
    /// for a ``CodedEachTime`` type, whose `encode(to:)` does more than write the value).
    public var remembersPlainValues: Bool

    /// Creates an encoder.
    public init(sortKeys: Bool = true, userInfo: [CodingUserInfoKey: any Sendable] = [:], remembersPlainValues: Bool = true) {
        self.sortKeys = sortKeys
        self.userInfo = userInfo
        self.remembersPlainValues = remembersPlainValues
    }

    /// Encodes `value` and returns its MessagePack bytes.
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        guard remembersPlainValues, userInfo.isEmpty else { return try encodeOnce(value) }
        return try PlainValueMemo.encode(value, sortedKeys: sortKeys) { try encodeOnce(value) }
    }

    /// Encodes `value` into a buffer of its own and hands that buffer over, not a copy: for a
    /// large value (a whole state) that is kept and sent as it is, where ``encode(_:)`` would
    /// copy its bytes out of the encoder's buffer into an array.
    public func encodeShared<T: Encodable>(_ value: T) throws -> EncodedBytes {
        let writer = MessagePackWriter()
        try encode(value, into: writer)
        return EncodedBytes(taking: writer)
    }

    /// Encodes `value` through `Codable`.
    private func encodeOnce<T: Encodable>(_ value: T) throws -> [UInt8] {
        let writer = ThreadWriterPool.acquire()
        defer { ThreadWriterPool.keep(writer) }
        try encode(value, into: writer)
        return writer.bytes
    }

    /// Appends the encoding of `value` to `writer`, so hot paths can reuse one
    /// writer (and its buffer) for many messages.
    public func encode<T: Encodable>(_ value: T, into writer: MessagePackWriter) throws {
        if userInfo.isEmpty, let kept = ThreadKept.take(from: EncodingSession.keptPerThread) {
            defer { kept.giveBack() }
            kept.state.sortKeys = sortKeys
            try kept.state.encodeValue(value, into: writer, parent: nil, key: nil)
            return
        }
        let session = EncodingSession(sortKeys: sortKeys, userInfo: userInfo)
        defer { session.tearDown() }
        try session.encodeValue(value, into: writer, parent: nil, key: nil)
    }
}
