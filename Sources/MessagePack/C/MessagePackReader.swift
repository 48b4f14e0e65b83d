import CMsgPack

/// Unpacks one complete MessagePack value with msgpack-c's `msgpack_unpack`, into the calling
/// thread's reused zone (see ``ThreadZone``).
///
/// Strings, binaries and extension payloads are unpacked *by reference*:
/// they point into the caller's buffer, so decoding from a ZeroMQ frame
/// copies nothing until Swift values are built.
///
/// Hostile input is checked before msgpack-c sees it (see `InputGuard`):
/// container headers can never make msgpack-c allocate much more than the
/// input size. Nesting is limited to ``MessagePack/maximumNestingDepth``.
///
/// Thread rules: not `Sendable`; one owner at a time. A reader may be reused for many inputs.
public final class MessagePackReader {
    /// Creates a reader.
    public init() {}

    /// Unpacks exactly one value filling all of `input` into a ``MessagePackValue``.
    /// - Throws: `DecodingError.dataCorrupted` for empty, truncated, invalid,
    ///   oversized, too deeply nested input or trailing bytes.
    public func read(_ input: UnsafeRawBufferPointer) throws -> MessagePackValue {
        try Self.read(input)
    }

    /// Like ``read(_:)``, without a reader.
    static func read(_ input: UnsafeRawBufferPointer) throws -> MessagePackValue {
        try withRoot(input) { try MessagePackValue(object: $0) { [] } }
    }

    /// Unpacks `input` and calls `body` with the root object. The object tree
    /// is valid only inside `body`; the zone is cleared before returning.
    static func withRoot<R>(_ input: UnsafeRawBufferPointer, _ body: (ObjectRef) throws -> R) throws -> R {
        try ThreadZone.withZone { zone in
            var root = msgpack_object()
            do throws(InputGuard.Failure) {
                try unpack(input, into: zone, root: &root)
            } catch {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: error.message))
            }
            return try withUnsafePointer(to: &root) { try body(ObjectRef($0)) }
        }
    }

    private static func unpack(_ input: UnsafeRawBufferPointer, into zone: UnsafeMutablePointer<msgpack_zone>,
                               root: inout msgpack_object) throws(InputGuard.Failure) {
        guard let base = input.baseAddress, input.count > 0 else { throw .empty }
        if !InputGuard.isPlainlySafe(input) {
            try InputGuard.validate(input, zone: zone)
        }
        var consumed = 0
        let status = msgpack_unpack(base.assumingMemoryBound(to: CChar.self), input.count, &consumed, zone, &root)
        switch status {
        case MSGPACK_UNPACK_SUCCESS, MSGPACK_UNPACK_EXTRA_BYTES:
            if consumed != input.count {
                throw .trailingBytes(offset: consumed, count: input.count - consumed)
            }
        default:
            // msgpack-c only reports a status code; let the exact walk say
            // what and where. It must fail for input msgpack-c rejected.
            try InputGuard.validate(input, zone: zone)
            throw status == MSGPACK_UNPACK_NOMEM_ERROR ? .outOfMemory : .truncated(offset: 0)
        }
    }
}
