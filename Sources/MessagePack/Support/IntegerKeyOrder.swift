/// Sorts the keys of a map with `Int` keys, for an encoder that writes keys in ascending order.
///
/// Why not `sort`: a large state is often one dictionary with integer keys (the `catalog`
/// app's is 945,195 entries at 64 MiB), and the comparison sort of its (key, position) pairs
/// took about 15% of encoding it with sorted keys. A least-significant-digit radix sort, a
/// byte at a time, makes one pass per byte in which the keys differ (three for keys below
/// 2^24) and no comparisons.
enum IntegerKeyOrder {
    /// Below this many keys a comparison sort is as fast and allocates less.
    static let radixThreshold = 512

    /// Sorts `keys` ascending and moves each element of `payload` with the key at its position;
    /// equal keys keep their relative order. Carrying what the caller reads next (a dictionary's
    /// index for the key) lets it walk both arrays in order.
    static func sort<Payload>(_ keys: inout [Int], carrying payload: inout [Payload]) {
        precondition(keys.count == payload.count, "a payload element per key")
        guard keys.count >= radixThreshold else {
            let order = keys.indices.sorted { keys[$0] < keys[$1] }
            (keys, payload) = (order.map { keys[$0] }, order.map { payload[$0] })
            return
        }
        flipSignBits(&keys)
        let counts = histograms(of: keys)
        var spareKeys = keys
        var sparePayload = payload
        for byte in 0 ..< 8 {
            var starts = Array(counts[byte * 256 ..< byte * 256 + 256])
            // A byte every key shares moves nothing.
            if starts.contains(keys.count) { continue }
            var next = 0
            for digit in 0 ..< 256 {
                (starts[digit], next) = (next, next + starts[digit])
            }
            scatter(keys, payload, byte: byte, starts: &starts, into: &spareKeys, &sparePayload)
            swap(&keys, &spareKeys)
            swap(&payload, &sparePayload)
        }
        flipSignBits(&keys)
    }

    /// Flips each key's sign bit, which makes the unsigned order of the bytes the signed order of
    /// the keys; flipping again gives the keys back.
    private static func flipSignBits(_ keys: inout [Int]) {
        keys.withUnsafeMutableBufferPointer { keys in
            for index in keys.indices { keys[index] ^= Int.min }
        }
    }

    /// Moves each key and what it carries to the next free slot of its bucket (by `byte`),
    /// keeping their order within a bucket.
    private static func scatter<Payload>(
        _ keys: [Int], _ payload: [Payload], byte: Int, starts: inout [Int],
        into spareKeys: inout [Int], _ sparePayload: inout [Payload]
    ) {
        starts.withUnsafeMutableBufferPointer { starts in
            spareKeys.withUnsafeMutableBufferPointer { toKeys in
                sparePayload.withUnsafeMutableBufferPointer { toPayload in
                    for index in keys.indices {
                        let key = keys[index]
                        let bucket = (key >> (byte * 8)) & 0xFF
                        let target = starts[bucket]
                        starts[bucket] = target + 1
                        toKeys[target] = key
                        toPayload[target] = payload[index]
                    }
                }
            }
        }
    }

    /// How many keys have each value of each byte: entry `byte * 256 + value`.
    private static func histograms(of keys: [Int]) -> [Int] {
        var counts = [Int](repeating: 0, count: 8 * 256)
        counts.withUnsafeMutableBufferPointer { counts in
            for key in keys {
                for byte in 0 ..< 8 {
                    counts[byte * 256 + (key >> (byte * 8)) & 0xFF] += 1
                }
            }
        }
        return counts
    }
}
