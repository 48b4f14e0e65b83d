/// Encodes `[String: V]` and `[Int: V]` whose value is a `String`, `Int`, `Double` or `Bool`, in
/// code specialised for each pair: the encoding of a large state is often that of one such
/// dictionary (the `catalog` app's is `[Int: String]` of 945,195 entries at 64 MiB, encoded for
/// every late joiner's fetch), and the generic `Dictionary<Key, Value>` the encoder otherwise
/// reaches copied every value into an array (a retain and a release each), sorted positions
/// through an indirect comparison, and encoded each value through the generic value path.
///
/// Writes exactly the bytes of the generic form: the map header, then each key (an integer or a
/// string) and its value as the encoder packs that scalar, keys in ascending order when
/// `sortKeys` is set, else in the dictionary's own order. Scalars cannot fail to encode, so no
/// coding path is kept.
enum ScalarMapEncoding {
    /// Writes `dictionary` and returns `true` if its type is one of the specialised pairs.
    static func encode<D>(_ dictionary: D, sortKeys: Bool, into writer: MessagePackWriter) -> Bool {
        if D.self == [Int: String].self { write(unsafeBitCast(dictionary, to: [Int: String].self), sortKeys, writer, intKey, writer.packString); return true }
        if D.self == [Int: Int].self { write(unsafeBitCast(dictionary, to: [Int: Int].self), sortKeys, writer, intKey, int); return true }
        if D.self == [Int: Double].self { write(unsafeBitCast(dictionary, to: [Int: Double].self), sortKeys, writer, intKey, writer.packDouble); return true }
        if D.self == [Int: Bool].self { write(unsafeBitCast(dictionary, to: [Int: Bool].self), sortKeys, writer, intKey, writer.packBool); return true }
        if D.self == [String: String].self { write(unsafeBitCast(dictionary, to: [String: String].self), sortKeys, writer, writer.packString, writer.packString); return true }
        if D.self == [String: Int].self { write(unsafeBitCast(dictionary, to: [String: Int].self), sortKeys, writer, writer.packString, int); return true }
        if D.self == [String: Double].self { write(unsafeBitCast(dictionary, to: [String: Double].self), sortKeys, writer, writer.packString, writer.packDouble); return true }
        if D.self == [String: Bool].self { write(unsafeBitCast(dictionary, to: [String: Bool].self), sortKeys, writer, writer.packString, writer.packBool); return true }
        return false

        func intKey(_ key: Int) { writer.packInt(Int64(key)) }
        func int(_ value: Int) { writer.packInt(Int64(value)) }
    }

    /// Called with concrete `K` and `V`, so specialised for them. Sorting sorts (key, position)
    /// pairs held side by side (integer keys by ``IntegerKeyOrder``, which carries the positions
    /// along), and each value is read at its position, without hashing.
    @inline(__always)
    private static func write<K: Comparable, V>(
        _ dictionary: [K: V], _ sortKeys: Bool, _ writer: MessagePackWriter, _ packKey: (K) -> Void, _ packValue: (V) -> Void
    ) {
        writer.packMapHeader(dictionary.count)
        guard sortKeys else {
            for (key, value) in dictionary {
                packKey(key)
                packValue(value)
            }
            return
        }
        guard K.self == Int.self else {
            var order: [(key: K, index: Dictionary<K, V>.Index)] = []
            order.reserveCapacity(dictionary.count)
            var index = dictionary.startIndex
            while index != dictionary.endIndex {
                order.append((dictionary[index].key, index))
                dictionary.formIndex(after: &index)
            }
            order.sort { $0.key < $1.key }
            for entry in order {
                packKey(entry.key)
                packValue(dictionary[entry.index].value)
            }
            return
        }
        var keys: [Int] = []
        var indices: [Dictionary<K, V>.Index] = []
        keys.reserveCapacity(dictionary.count)
        indices.reserveCapacity(dictionary.count)
        var index = dictionary.startIndex
        while index != dictionary.endIndex {
            keys.append(unsafeBitCast(dictionary[index].key, to: Int.self))
            indices.append(index)
            dictionary.formIndex(after: &index)
        }
        IntegerKeyOrder.sort(&keys, carrying: &indices)
        for (key, index) in zip(keys, indices) {
            packKey(unsafeBitCast(key, to: K.self))
            packValue(dictionary[index].value)
        }
    }
}
