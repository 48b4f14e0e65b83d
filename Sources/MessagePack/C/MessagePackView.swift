import CMsgPack

/// A read-only view of one value msgpack-c unpacked, for the package's fixed-shape records and
/// headers: their fields are read where msgpack-c left them, and only the parts kept become
/// Swift values (a string or bytes copied out, a number read).
///
/// Why not ``MessagePackValue``: building a value tree allocates for every array, map and string
/// in it, and reading a journal record through one was an eighth of a standby's time.
///
/// A view is valid only inside the body of ``read(_:_:)``: it points into the zone msgpack-c
/// unpacked into (the thread's, cleared when the body returns) and into the input bytes.
/// Accessors return `nil` for a value of another type, so a reader checks the shape it expects
/// and falls back (or refuses) on anything else.
package struct MessagePackView {
    private let object: ObjectRef

    private init(_ object: ObjectRef) { self.object = object }

    /// Unpacks `bytes` (exactly one value, checked as ``MessagePackReader`` checks input) and
    /// calls `body` with a view of it.
    /// - Throws: `DecodingError.dataCorrupted` for input that is not one whole MessagePack value;
    ///   what `body` throws.
    package static func read<R>(_ bytes: [UInt8], _ body: (MessagePackView) throws -> R) throws -> R {
        try bytes.withUnsafeBytes { input in
            try MessagePackReader.withRoot(input) { try body(MessagePackView($0)) }
        }
    }

    /// The value of a positive integer (or zero); `nil` for any other type.
    package var uint: UInt64? {
        object.type == MSGPACK_OBJECT_POSITIVE_INTEGER ? object.unsigned : nil
    }

    /// A copy of a `str` value, when it is valid UTF-8; `nil` for any other type.
    package var string: String? {
        object.isString ? object.validatedString : nil
    }

    /// This `str` as a `String`: `known` itself when its UTF-8 is exactly these bytes (no new
    /// `String` is made or checked; a name that arrives again and again, such as a client's id
    /// in each of its actions, is made once), else a new one as ``string`` makes it.
    package func string(reusing known: String?) -> String? {
        guard object.isString else { return nil }
        if let known, known.utf8.withContiguousStorageIfAvailable({ object.stringEquals(UnsafeRawBufferPointer($0)) }) == true {
            return known
        }
        return object.validatedString
    }

    /// Whether this is a `str` whose bytes are exactly `text`'s: no `String` is made.
    package func isString(_ text: StaticString) -> Bool {
        object.stringEquals(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A copy of a `bin` value's bytes; `nil` for any other type.
    package var binary: [UInt8]? {
        object.type == MSGPACK_OBJECT_BIN ? [UInt8](object.binaryBytes) : nil
    }

    /// Whether this is `nil`.
    package var isNil: Bool { object.isNil }

    /// The number of elements of an array; `nil` for any other type.
    package var arrayCount: Int? {
        object.isArray ? object.arrayCount : nil
    }

    /// The element of an array at `index` (`0 ..< arrayCount`).
    package func element(at index: Int) -> MessagePackView {
        precondition(object.isArray && index >= 0 && index < object.arrayCount, "array element \(index) out of range")
        return MessagePackView(object.element(index))
    }

    /// The whole value as a tree, for the rare field whose shape varies; `nil` when a string in
    /// it is not valid UTF-8.
    package var tree: MessagePackValue? {
        try? MessagePackValue(object: object) { [] }
    }

    /// The number of entries of a map; `nil` for any other type.
    package var mapCount: Int? {
        object.isMap ? object.mapCount : nil
    }

    /// The key of a map's entry at `index` (`0 ..< mapCount`).
    package func key(at index: Int) -> MessagePackView {
        precondition(object.isMap && index >= 0 && index < object.mapCount, "map entry \(index) out of range")
        return MessagePackView(object.key(index))
    }

    /// The value of a map's entry at `index` (`0 ..< mapCount`).
    package func value(at index: Int) -> MessagePackView {
        precondition(object.isMap && index >= 0 && index < object.mapCount, "map entry \(index) out of range")
        return MessagePackView(object.value(index))
    }

    /// In a map, the value under the string key `key` when exactly one entry has it; `nil` when
    /// none or several do, or for any other type.
    package func value(forKey key: StaticString) -> MessagePackView? {
        guard object.isMap else { return nil }
        var found: ObjectRef?
        for index in 0 ..< object.mapCount where MessagePackView(object.key(index)).isString(key) {
            guard found == nil else { return nil }
            found = object.value(index)
        }
        return found.map(MessagePackView.init)
    }
}
