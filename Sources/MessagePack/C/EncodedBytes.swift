#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMsgPack

/// The bytes of one encoding, owned by this object and never changed after it is made.
///
/// Why: a large value's encoding (a whole application state, tens of megabytes) is made on one
/// thread, kept on another and sent by a third, and libzmq can send bytes it is lent instead of
/// copying them into a message of its own. An `Array` cannot lend its storage past a closure;
/// this object can, for as long as the borrower holds a reference to it: its storage is the
/// buffer msgpack-c wrote the encoding into, taken over whole (``MessagePackEncoder/encodeShared(_:)``),
/// so it is neither copied out nor copied again to be sent.
///
/// A collection of the bytes (`Array(bytes)` copies them); equal when their bytes are.
public final class EncodedBytes: RandomAccessCollection, Equatable, @unchecked Sendable {
    // @unchecked: `base` points at memory that only `init` writes and only `deinit` frees; in
    // between it is read-only, so any number of threads may read it at once, and a reader holds
    // a reference to this object, which keeps `deinit` from running under it.
    private let base: UnsafeMutableRawPointer?
    /// The number of bytes.
    public let count: Int

    /// Takes over the bytes `writer` packed (its `malloc`ed buffer), leaving the writer empty,
    /// with no allocation: its next value starts a new buffer.
    public init(taking writer: MessagePackWriter) {
        count = writer.count
        base = msgpack_sbuffer_release(writer.buffer).map(UnsafeMutableRawPointer.init)
    }

    /// A copy of `bytes`.
    public init(_ bytes: some Collection<UInt8>) {
        count = bytes.count
        guard count > 0 else {
            base = nil
            return
        }
        // As for the writer's buffer: failing to allocate stops the process.
        guard let memory = malloc(count) else { fatalError("cannot allocate \(count) bytes") }
        let buffer = UnsafeMutableRawBufferPointer(start: memory, count: count)
        if bytes.withContiguousStorageIfAvailable({ buffer.copyMemory(from: UnsafeRawBufferPointer($0)) }) == nil {
            buffer.copyBytes(from: bytes)
        }
        base = memory
    }

    deinit {
        free(base)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "index out of range")
        return withUnsafeBytes { $0[position] }
    }

    /// Calls `body` with the bytes, without copying them; the pointer is valid inside `body`
    /// (and, for a borrower that keeps a reference to this object, for as long as it does).
    public func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    public func withContiguousStorageIfAvailable<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result? {
        try withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
    }

    /// A copy of the bytes in `range` (clamped to the bytes there are).
    public func copy(_ range: Range<Int>) -> [UInt8] {
        let clamped = range.clamped(to: 0 ..< count)
        return withUnsafeBytes { [UInt8](UnsafeRawBufferPointer(rebasing: $0[clamped])) }
    }

    public static func == (lhs: EncodedBytes, rhs: EncodedBytes) -> Bool {
        lhs === rhs || (lhs.count == rhs.count && lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { left.elementsEqual($0) } })
    }
}
