/// Namespace for module-wide constants of the MessagePack codec.
///
/// The codec maps Swift `Codable` onto msgpack-c: msgpack-c does all byte-level
/// packing (`msgpack_pack_*` into a `msgpack_sbuffer`) and unpacking
/// (`msgpack_unpack` into a zone-allocated `msgpack_object` tree); this
/// module only walks those C structures.
public enum MessagePack {
    /// The deepest container nesting that can be decoded.
    ///
    /// msgpack-c's object unpacker keeps open containers on a fixed stack of
    /// `MSGPACK_EMBED_STACK_SIZE` (32) entries and refuses a 33rd open
    /// container, even an empty one. Deeper input is reported as a
    /// `DecodingError.dataCorrupted` that names this limit.
    public static let maximumNestingDepth = 32

    /// The msgpack extension type reserved for timestamps (`Date` and
    /// ``MessagePackValue/timestamp(seconds:nanoseconds:)``).
    public static let timestampExtensionType: Int8 = -1
}
