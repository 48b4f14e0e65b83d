/// A large collection of small values: the shape of the `catalog` app's state (a dictionary of
/// integer keys to 64-character strings), whose decoding is most of a late-joining observer's
/// wait for a state of many MiB.
struct BenchCatalog: Codable, Equatable {
    var fills: Int
    var entries: [Int: String]

    /// `count` entries, each its key's decimal digits repeated to 64 characters (as the app
    /// generates them).
    static func sample(entries count: Int) -> BenchCatalog {
        var entries: [Int: String] = [:]
        entries.reserveCapacity(count)
        for key in 0 ..< count {
            let digits = Array(String(key).utf8)
            let text = (0 ..< 64).map { digits[$0 % digits.count] }
            entries[key] = String(decoding: text, as: UTF8.self)
        }
        return BenchCatalog(fills: 1, entries: entries)
    }
}
