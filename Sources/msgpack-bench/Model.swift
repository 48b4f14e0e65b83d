/// The representative snapshot: `{version, counter, items: [100 × {id, name, done}]}`.
struct BenchItem: Codable, Equatable {
    var id: Int
    var name: String
    var done: Bool
}

struct BenchSnapshot: Codable, Equatable {
    var version: Int
    var counter: Int
    var items: [BenchItem]

    static func sample(items count: Int = 100) -> BenchSnapshot {
        BenchSnapshot(version: 7, counter: 123_456, items: (0 ..< count).map { index in
            let digits = String(index)
            // 16 characters: "item-" plus 11 zero-padded digits.
            let name = "item-" + String(repeating: "0", count: 11 - digits.count) + digits
            return BenchItem(id: index, name: name, done: index % 3 == 0)
        })
    }
}
