/// Remembers, per thread, what small plain values decode from and encode to, so that the coders
/// run `Codable` once per distinct value instead of once per call.
///
/// Why: a node decodes and encodes the same few small values over and over (`{"increase": {}}`
/// for every job of a counter), and each pass through `Codable` costs a microsecond or two of
/// the standard library's containers and type lookups, whatever the value's size.
///
/// What is remembered: values of a trivially copyable type (no references, so no `String`, no
/// array, no class inside) of at most 16 bytes. Such a value is all in its bytes: a decoded value
/// is kept as its bytes under the type and the input's bytes (at most 32), an encoding under the
/// type, the key order and the value's bytes. This assumes what `Codable` conformances are meant
/// to be, functions of the bytes or of the value: a hand-written `init(from:)` or `encode(to:)`
/// that reads a clock or counts its calls is run once per distinct value and thread. Such a type
/// conforms to ``CodedEachTime`` and is never remembered; coders with `userInfo` skip the memo,
/// and each coder's `remembersPlainValues` turns it off.
///
/// Bounds: at most ``limit`` entries per table and thread; a full table is emptied and fills
/// again, so a stream of ever new values costs the memo's upkeep, not memory.
final class PlainValueMemo {
    /// Entries per table and thread.
    static let limit = 1_024
    /// Input bytes that are remembered at most, and a plain value's size at most.
    static let maxInputBytes = 32
    static let maxValueBytes = 16
    /// Encodings longer than this are not kept.
    static let maxEncodingBytes = 64

    // The tables are `@exclusivity(unchecked)`: a memo belongs to one thread, and no access to a
    // table spans a call that could reach the memo again (`decode` and `encode` run before the
    // result is stored); the run-time checks showed in every lookup in an authority's profile.
    @exclusivity(unchecked) private var decoded: [Key: ValueBits] = [:]
    @exclusivity(unchecked) private var encoded: [Key: [UInt8]] = [:]
    /// The entries used last, looked at before the tables: a node mostly codes the same few
    /// values in turn, and comparing a key costs less than hashing it (hashing was about 2% of
    /// a busy authority's time).
    @exclusivity(unchecked) private var recentDecoded = RecentEntries<ValueBits>()
    @exclusivity(unchecked) private var recentEncoded = RecentEntries<[UInt8]>()

    /// The value `T` decodes from `input`, decoding it with `decode` the first time.
    static func decode<T>(_: T.Type, from input: UnsafeRawBufferPointer, _ decode: () throws -> T) rethrows -> T {
        guard isPlain(T.self), let key = Key(T.self, flavor: 0, bytes: input), let memo = current else { return try decode() }
        if let bits = memo.recentDecoded[key] { return bits.load(as: T.self) }
        if let bits = memo.decoded[key] {
            memo.recentDecoded.note(bits, under: key)
            return bits.load(as: T.self)
        }
        let value = try decode()
        remember(ValueBits(value), of: T.self, under: key, in: &memo.decoded)
        return value
    }

    /// The encoding of `value` (`sortedKeys` is part of the key), made with `encode` the first time.
    static func encode<T>(_ value: T, sortedKeys: Bool, _ encode: () throws -> [UInt8]) rethrows -> [UInt8] {
        guard isPlain(T.self), let memo = current else { return try encode() }
        let key = withUnsafeBytes(of: value) { Key(T.self, flavor: sortedKeys ? 1 : 2, bytes: $0) }
        guard let key else { return try encode() }
        if let bytes = memo.recentEncoded[key] { return bytes }
        if let bytes = memo.encoded[key] {
            memo.recentEncoded.note(bytes, under: key)
            return bytes
        }
        let bytes = try encode()
        if bytes.count <= maxEncodingBytes { remember(bytes, of: T.self, under: key, in: &memo.encoded) }
        return bytes
    }

    /// Keeps `entry` for a value of `type` unless the type runs its `Codable` each time; a full
    /// table is emptied first.
    private static func remember<Entry>(_ entry: Entry, of type: Any.Type, under key: Key, in table: inout [Key: Entry]) {
        guard !(type is any CodedEachTime.Type) else { return }
        if table.count >= limit { table.removeAll(keepingCapacity: true) }
        table[key] = entry
    }

    /// Whether a `T`'s bytes are the whole value and fit ``ValueBits``.
    @inline(__always)
    private static func isPlain<T>(_: T.Type) -> Bool {
        // At most 8-byte aligned, as `ValueBits` is: its bytes then load as a `T` in place.
        _isPOD(T.self) && MemoryLayout<T>.size <= maxValueBytes && MemoryLayout<T>.alignment <= MemoryLayout<UInt64>.alignment
    }

    /// Each thread's memo, freed at the thread's exit.
    private static let local = ThreadLocalObject<PlainValueMemo>()

    /// This thread's memo, made on first use; `nil` when no key could be made.
    private static var current: PlainValueMemo? { local.current { PlainValueMemo() } }

    /// The last few entries found in a table, replaced oldest first.
    private struct RecentEntries<Entry> {
        static var slots: Int { 4 }
        private var keys: [Key] = []
        private var entries: [Entry] = []
        private var next = 0

        subscript(key: Key) -> Entry? {
            for index in keys.indices where keys[index] == key { return entries[index] }
            return nil
        }

        mutating func note(_ entry: Entry, under key: Key) {
            if keys.count < Self.slots {
                keys.append(key)
                entries.append(entry)
                return
            }
            keys[next] = key
            entries[next] = entry
            next = (next + 1) % Self.slots
        }
    }

    /// A type, what is done with it, and up to 32 bytes (input or value), zero-padded.
    private struct Key: Hashable {
        var type: ObjectIdentifier
        /// 0: decoded from these bytes; 1, 2: the encoding of this value, keys sorted or not.
        var flavor: UInt8
        var count: UInt8
        var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0

        init?(_ type: Any.Type, flavor: UInt8, bytes: UnsafeRawBufferPointer) {
            guard bytes.count <= PlainValueMemo.maxInputBytes else { return nil }
            self.type = ObjectIdentifier(type)
            self.flavor = flavor
            count = UInt8(bytes.count)
            var words = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
            (w0, w1, w2, w3) = words
        }
    }

    /// The bytes of a plain value of at most 16 bytes, zero-padded.
    private struct ValueBits {
        var low: UInt64 = 0
        var high: UInt64 = 0

        init<T>(_ value: T) {
            withUnsafeBytes(of: value) { source in
                withUnsafeMutableBytes(of: &self) { $0.copyMemory(from: source) }
            }
        }

        /// The value, for a `T` of at most 8-byte alignment (see `isPlain`). An aligned load:
        /// `loadUnaligned` copies through a temporary buffer of `T`, whose generic type the
        /// runtime looked up on every call.
        func load<T>(as _: T.Type) -> T {
            withUnsafeBytes(of: self) { $0.load(as: T.self) }
        }
    }
}
