import CMsgPack

/// A reusable MessagePack output buffer: a `msgpack_sbuffer` plus the
/// `msgpack_packer` that appends to it.
///
/// Every `pack…` call forwards to the matching msgpack-c `msgpack_pack_*`
/// function, which always chooses the smallest wire form (for example
/// `packInt(5)` writes a positive fixint). Values are appended in call order;
/// map and array headers only announce a count, the caller then packs exactly
/// that many values (two per map entry: key, then value).
///
/// Use it to hand-pack hot protocol messages:
///
/// ```swift
/// let writer = MessagePackWriter()
/// writer.packMapHeader(1)
/// writer.packString("tick")
/// writer.packUInt(42)
/// send(writer.bytes)
/// writer.reset()   // keeps the allocation for the next message
/// ```
///
/// Performance: the buffer grows geometrically and is never shrunk; after
/// warm-up, packing does not allocate. `reset()` empties it in O(1).
///
/// Thread rules: a writer is mutable C state with one owner. It is not
/// `Sendable`; never share one between tasks or threads. Create one per
/// connection/actor instead.
///
/// Allocation failure inside msgpack-c (the buffer cannot grow) is treated
/// like any Swift allocation failure and stops the process.
public final class MessagePackWriter {
    @usableFromInline let buffer: UnsafeMutablePointer<msgpack_sbuffer>
    @usableFromInline let packer: UnsafeMutablePointer<msgpack_packer>

    /// Where `packer` lies after `buffer` in their one allocation.
    private static var packerOffset: Int {
        let alignment = MemoryLayout<msgpack_packer>.alignment
        return (MemoryLayout<msgpack_sbuffer>.stride + alignment - 1) / alignment * alignment
    }

    /// Creates an empty writer. No memory is allocated until the first value is packed.
    public init() {
        // The buffer and its packer share one allocation: a writer made for one small message
        // (the encoder makes one per call) costs one allocation fewer.
        let storage = UnsafeMutableRawPointer.allocate(
            byteCount: Self.packerOffset + MemoryLayout<msgpack_packer>.size,
            alignment: max(MemoryLayout<msgpack_sbuffer>.alignment, MemoryLayout<msgpack_packer>.alignment))
        buffer = storage.bindMemory(to: msgpack_sbuffer.self, capacity: 1)
        msgpack_sbuffer_init(buffer)
        packer = (storage + Self.packerOffset).bindMemory(to: msgpack_packer.self, capacity: 1)
        msgpack_packer_init(packer, buffer, msgpack_sbuffer_write)
    }

    deinit {
        msgpack_sbuffer_destroy(buffer)
        UnsafeMutableRawPointer(buffer).deallocate()
    }

    // MARK: Output

    /// The number of bytes packed since creation or the last `reset()`.
    @inlinable public var count: Int { buffer.pointee.size }

    /// A copy of the packed bytes.
    public var bytes: [UInt8] {
        withUnsafeBytes { [UInt8]($0) }
    }

    /// Calls `body` with the packed bytes, without copying them.
    /// The pointer is only valid inside `body` and until the next mutation.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: buffer.pointee.data, count: buffer.pointee.size))
    }

    /// The bytes the buffer holds room for (what it allocated so far).
    var capacity: Int { buffer.pointee.alloc }

    /// Empties the writer but keeps its allocated capacity for reuse.
    @inlinable public func reset() { msgpack_sbuffer_clear(buffer) }

    // MARK: Scalars

    /// Packs `nil`.
    @inlinable public func packNil() { check(msgpack_pack_nil(packer)) }

    /// Packs `true` or `false`.
    @inlinable public func packBool(_ value: Bool) {
        check(value ? msgpack_pack_true(packer) : msgpack_pack_false(packer))
    }

    /// Packs a signed integer in its smallest form (non-negative values use the unsigned forms).
    @inlinable public func packInt(_ value: Int64) { check(msgpack_pack_int64(packer, value)) }

    /// Packs an unsigned integer in its smallest form.
    @inlinable public func packUInt(_ value: UInt64) { check(msgpack_pack_uint64(packer, value)) }

    /// Packs a float 64.
    @inlinable public func packDouble(_ value: Double) { check(msgpack_pack_double(packer, value)) }

    /// Packs a float 32.
    @inlinable public func packFloat(_ value: Float) { check(msgpack_pack_float(packer, value)) }

    // MARK: Strings and bytes

    /// Packs a UTF-8 string (fixstr/str8/str16/str32).
    @inlinable public func packString(_ value: String) {
        // Native and small strings lend their UTF-8 as they are: `withUTF8` needs a `var` copy of
        // the string (a retain and a release per string, a twentieth of encoding a small struct)
        // and is kept for the strings that have no contiguous UTF-8 to lend.
        if let packed = value.utf8.withContiguousStorageIfAvailable({ utf8 in
            msgpack_pack_str_with_body(packer, utf8.baseAddress, utf8.count)
        }) {
            check(packed)
            return
        }
        var value = value
        value.withUTF8 { utf8 in
            check(msgpack_pack_str_with_body(packer, utf8.baseAddress, utf8.count))
        }
    }

    /// Packs already UTF-8 encoded string bytes. The caller guarantees they are valid UTF-8.
    @inlinable public func packString(utf8 bytes: UnsafeRawBufferPointer) {
        check(msgpack_pack_str_with_body(packer, bytes.baseAddress, bytes.count))
    }

    /// Packs binary data (bin8/bin16/bin32).
    @inlinable public func packBinary(_ bytes: UnsafeRawBufferPointer) {
        check(msgpack_pack_bin_with_body(packer, bytes.baseAddress, bytes.count))
    }

    /// Packs binary data (bin8/bin16/bin32).
    @inlinable public func packBinary(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { packBinary($0) }
    }

    // MARK: Containers

    /// Starts an array of `count` elements; pack exactly `count` values next.
    @inlinable public func packArrayHeader(_ count: Int) {
        precondition(count >= 0 && UInt64(count) <= UInt64(UInt32.max), "msgpack array too large")
        check(msgpack_pack_array(packer, count))
    }

    /// Starts a map of `count` entries; pack exactly `count` key/value pairs next.
    @inlinable public func packMapHeader(_ count: Int) {
        precondition(count >= 0 && UInt64(count) <= UInt64(UInt32.max), "msgpack map too large")
        check(msgpack_pack_map(packer, count))
    }

    // MARK: Extensions

    /// Packs an extension value (fixext1/2/4/8/16, ext8/16/32).
    @inlinable public func packExtension(type: Int8, data: UnsafeRawBufferPointer) {
        check(msgpack_pack_ext_with_body(packer, data.baseAddress, data.count, type))
    }

    /// Packs an extension value (fixext1/2/4/8/16, ext8/16/32).
    @inlinable public func packExtension(type: Int8, data: [UInt8]) {
        data.withUnsafeBytes { packExtension(type: type, data: $0) }
    }

    /// Packs a timestamp (extension type -1) in its smallest form:
    /// timestamp32, timestamp64 or timestamp96.
    /// - Precondition: `nanoseconds < 1_000_000_000`.
    @inlinable public func packTimestamp(seconds: Int64, nanoseconds: UInt32) {
        precondition(nanoseconds < 1_000_000_000, "timestamp nanoseconds out of range")
        var timestamp = msgpack_timestamp(tv_sec: seconds, tv_nsec: nanoseconds)
        check(msgpack_pack_timestamp(packer, &timestamp))
    }

    // MARK: Splicing

    /// Appends bytes that already form complete MessagePack values (for
    /// example a payload encoded earlier by another writer). Counts towards
    /// the enclosing container like the values it contains.
    @inlinable public func appendEncoded(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        check(msgpack_sbuffer_write(buffer, base.assumingMemoryBound(to: CChar.self), bytes.count))
    }

    /// Appends the bytes `other` holds in `range`.
    @usableFromInline func appendEncoded(from other: MessagePackWriter, range: Range<Int>) {
        guard !range.isEmpty, let base = other.buffer.pointee.data else { return }
        check(msgpack_sbuffer_write(buffer, base + range.lowerBound, range.count))
    }

    // MARK: Moving packed bytes (for the encoder, which learns a container's count at its end)

    /// Drops the bytes packed after the first `count` (the encoder undoes a value that failed).
    func truncate(to count: Int) {
        precondition(count >= 0 && count <= buffer.pointee.size, "truncating beyond the packed bytes")
        buffer.pointee.size = count
    }

    /// Inserts the bytes `other` holds at `offset`, moving the bytes after it back.
    func insert(_ other: MessagePackWriter, at offset: Int) {
        let oldCount = count
        let length = other.count
        precondition(offset >= 0 && offset <= oldCount, "inserting beyond the packed bytes")
        guard length > 0, let source = other.buffer.pointee.data else { return }
        // Grows the buffer by `length` (msgpack-c's own growth), then makes room at `offset`.
        check(msgpack_sbuffer_write(buffer, source, length))
        guard offset < oldCount, let base = buffer.pointee.data else { return }
        // Raw copies move like memmove: the two ranges overlap.
        UnsafeMutableRawPointer(base + offset + length).copyMemory(from: base + offset, byteCount: oldCount - offset)
        UnsafeMutableRawPointer(base + offset).copyMemory(from: source, byteCount: length)
    }

    /// The one-byte headers msgpack-c packs for maps of 0 to 15 entries (fixmap).
    static let fixMapHeaders: [UInt8] = (0 ..< 16).map { count in
        let writer = MessagePackWriter()
        writer.packMapHeader(count)
        return writer.withUnsafeBytes { $0[0] }
    }

    /// The one-byte headers msgpack-c packs for arrays of 0 to 15 elements (fixarray).
    static let fixArrayHeaders: [UInt8] = (0 ..< 16).map { count in
        let writer = MessagePackWriter()
        writer.packArrayHeader(count)
        return writer.withUnsafeBytes { $0[0] }
    }

    /// Replaces the one-byte header packed at `offset` with another one-byte header (one of
    /// `fixMapHeaders` or `fixArrayHeaders`).
    func replaceHeader(at offset: Int, with header: UInt8) {
        precondition(offset >= 0 && offset < count, "no placeholder header at \(offset)")
        guard let base = buffer.pointee.data else { return }
        UnsafeMutableRawPointer(base).storeBytes(of: header, toByteOffset: offset, as: UInt8.self)
    }

    /// Replaces the one-byte header packed at `offset` (a fixmap or fixarray of count 0, packed
    /// before the count was known) with the header `header` holds.
    func replaceHeader(at offset: Int, with header: MessagePackWriter) {
        let length = header.count
        precondition(offset >= 0 && offset < count && length > 0, "no placeholder header at \(offset)")
        guard let source = header.buffer.pointee.data else { return }
        if length > 1 {
            let oldCount = count
            // Room for the longer header: grow by the difference, move the contents back.
            check(msgpack_sbuffer_write(buffer, source, length - 1))
            guard let base = buffer.pointee.data else { return }
            UnsafeMutableRawPointer(base + offset + length).copyMemory(from: base + offset + 1, byteCount: oldCount - offset - 1)
        }
        guard let base = buffer.pointee.data else { return }
        UnsafeMutableRawPointer(base + offset).copyMemory(from: source, byteCount: length)
    }

    @inlinable @inline(__always)
    func check(_ status: Int32) {
        if status != 0 { writerAllocationFailed() }
    }
}

@usableFromInline
func writerAllocationFailed() -> Never {
    fatalError("msgpack-c could not grow its output buffer (out of memory)")
}
