import CMsgPack

/// Unpacks one complete MessagePack value with msgpack-c's
/// `msgpack_unpack_next`, owning the `msgpack_unpacked` result and its zone.
///
/// Strings, binaries and extension payloads are unpacked *by reference*:
/// they point into the caller's buffer, so decoding from a ZeroMQ frame
/// copies nothing until Swift values are built.
///
/// Hostile input is checked before msgpack-c sees it (see `InputGuard`):
/// container headers can never make msgpack-c allocate much more than the
/// input size. Nesting is limited to ``MessagePack/maximumNestingDepth``.
///
/// Thread rules: not `Sendable`; one owner at a time. A reader may be reused
/// for many inputs; each `read` frees the previous zone.
public final class MessagePackReader {
    private let unpacked: UnsafeMutablePointer<msgpack_unpacked>

    /// Creates a reader. Zones are allocated per read by msgpack-c.
    public init() {
        unpacked = .allocate(capacity: 1)
        msgpack_unpacked_init(unpacked)
    }

    deinit {
        msgpack_unpacked_destroy(unpacked)
        unpacked.deallocate()
    }

    /// Unpacks exactly one value filling all of `input` into a ``MessagePackValue``.
    /// - Throws: `DecodingError.dataCorrupted` for empty, truncated, invalid,
    ///   oversized, too deeply nested input or trailing bytes.
    public func read(_ input: UnsafeRawBufferPointer) throws -> MessagePackValue {
        try withRoot(input) { try MessagePackValue(object: $0) { [] } }
    }

    /// Unpacks `input` and calls `body` with the root object. The object tree
    /// is valid only inside `body`; the zone is released before returning.
    func withRoot<R>(_ input: UnsafeRawBufferPointer, _ body: (ObjectRef) throws -> R) throws -> R {
        try Self.withRoot(input, unpacked: unpacked, body)
    }

    /// Like `withRoot` on a reader, with the `msgpack_unpacked` on the stack: a decode call of one
    /// small value (an action) otherwise spent two of its allocations on a reader object and its
    /// `msgpack_unpacked`.
    static func withRoot<R>(_ input: UnsafeRawBufferPointer, _ body: (ObjectRef) throws -> R) throws -> R {
        var unpacked = msgpack_unpacked()
        msgpack_unpacked_init(&unpacked)
        return try withUnsafeMutablePointer(to: &unpacked) { try withRoot(input, unpacked: $0, body) }
    }

    private static func withRoot<R>(
        _ input: UnsafeRawBufferPointer, unpacked: UnsafeMutablePointer<msgpack_unpacked>, _ body: (ObjectRef) throws -> R
    ) throws -> R {
        defer { msgpack_unpacked_destroy(unpacked) }
        do {
            try unpack(input, into: unpacked)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: error.message))
        }
        guard let root = UnsafeMutablePointer(unpacked).pointer(to: \.data) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "No root object."))
        }
        return try body(ObjectRef(UnsafePointer(root)))
    }

    private static func unpack(_ input: UnsafeRawBufferPointer, into unpacked: UnsafeMutablePointer<msgpack_unpacked>) throws(InputGuard.Failure) {
        guard let base = input.baseAddress, input.count > 0 else { throw .empty }
        if !InputGuard.isPlainlySafe(input) {
            try InputGuard.validate(input)
        }
        var consumed = 0
        let status = msgpack_unpack_next(
            unpacked, base.assumingMemoryBound(to: CChar.self), input.count, &consumed)
        switch status {
        case MSGPACK_UNPACK_SUCCESS, MSGPACK_UNPACK_EXTRA_BYTES:
            if consumed != input.count {
                throw .trailingBytes(offset: consumed, count: input.count - consumed)
            }
        default:
            // msgpack-c only reports a status code; let the exact walk say
            // what and where. It must fail for input msgpack-c rejected.
            try InputGuard.validate(input)
            throw status == MSGPACK_UNPACK_NOMEM_ERROR ? .outOfMemory : .truncated(offset: 0)
        }
    }
}
