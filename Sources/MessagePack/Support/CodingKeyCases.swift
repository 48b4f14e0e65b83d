/// The cases of a `CodingKey` enum, for an error that says which enum cases exist.
///
/// Swift gives no way to list the cases of an enum that is not `CaseIterable`, and the
/// `CodingKeys` Swift synthesises for an enum's cases are not: their `init?(intValue:)` always
/// fails. This reads them the way the runtime stores such an enum instead (docs/ABI/TypeLayout):
/// an enum of 2 to 256 cases without payloads is one byte that holds case number *i* as *i*, in
/// declaration order, and `Optional` uses the first byte value past the last case for `nil`; an
/// enum of one case takes no bytes. Any other key type yields `nil`, never a guess.
enum CodingKeyCases {
    /// The `stringValue` of every case of `keyType`, in declaration order; `nil` unless it is an
    /// enum of 1 to 256 cases without payloads.
    ///
    /// - Parameter isInhabited: the caller knows that `keyType` has at least one value, as the
    ///   `CodingKeys` of a synthesised enum decoding have (one per case of the enum). A type that
    ///   takes no bytes is read only then: an enum of one case looks like an enum of none, and a
    ///   value of an enum of none must never be made up.
    static func names<Key: CodingKey>(of keyType: Key.Type, isInhabited: Bool) -> [String]? {
        switch MemoryLayout<Key>.size {
        case 0:
            guard isInhabited else { return nil }
            // Safe: a type that takes no bytes and has a value has exactly that one value.
            let only = unsafeBitCast((), to: Key.self)
            return isPlainEnum(only) ? [only.stringValue] : nil
        case 1:
            // Every byte below the one `Optional` takes for `nil` is a value of `Key`; a one-byte
            // type without spare values (a struct of a UInt8) has an `Optional` one byte larger.
            guard MemoryLayout<Key?>.size == 1 else { return nil }
            var names: [String] = []
            for tag in UInt8.min ... UInt8.max {
                // Safe for the enums this reads: `tag` is one of the enum's cases or the byte
                // that means `nil`, and the loop stops there, before any byte that is neither.
                guard let key = unsafeBitCast(tag, to: Key?.self) else { break }
                // Byte 0 is a value of any one-byte type with spare values; one that is not such
                // an enum (a struct of a Bool, an enum with a payload) stops here, as its values
                // need not be the bytes below `nil`.
                guard tag > 0 || isPlainEnum(key) else { return nil }
                names.append(key.stringValue)
            }
            return names.isEmpty ? nil : names
        default:
            return nil
        }
    }

    /// Whether `value` is a case of an enum that carries no payload.
    private static func isPlainEnum(_ value: some Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .enum && mirror.children.isEmpty
    }
}
