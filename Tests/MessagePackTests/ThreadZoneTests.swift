import Testing
@testable import MessagePack

/// Every unpack on a thread reuses that thread's zones: values decoded one after another,
/// decodes nested in another's `init(from:)` (a zone per depth), and decodes on many threads at
/// once must each see their own bytes only.
@Suite struct ThreadZoneTests {
    /// A value that carries the next level as bytes and decodes it in its own `init(from:)`:
    /// `levels` unpacks nested in one another.
    struct Doll: Codable, Equatable {
        let level: Int
        let label: String
        let inner: [Doll]

        enum CodingKeys: String, CodingKey { case level, label, inner }

        init(levels: Int, level: Int = 1) {
            self.level = level
            label = "level \(level), a label longer than a small string"
            inner = level < levels ? [Doll(levels: levels, level: level + 1)] : []
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            level = try container.decode(Int.self, forKey: .level)
            let bytes = try container.decode([UInt8].self, forKey: .inner)
            // Twice: were the zone shared, the first nested decode's end would free the space
            // this level's tree uses, and the second would write over it.
            _ = try MessagePackDecoder().decode([Doll].self, from: bytes)
            inner = try MessagePackDecoder().decode([Doll].self, from: bytes)
            // Read after the nested decodes: this level's tree must still be intact.
            label = try container.decode(String.self, forKey: .label)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(level, forKey: .level)
            try container.encode(try MessagePackEncoder().encode(inner), forKey: .inner)
            try container.encode(label, forKey: .label)
        }
    }

    @Test func unpacksNestedDeeperThanTheKeptZonesGetZonesOfTheirOwnAndKeptOnesAreReused() throws {
        // 8 unpacks nested in one another (the outer value and 7 levels inside it).
        let doll = Doll(levels: 8)
        let bytes = try MessagePackEncoder().encode(doll)
        #expect(try MessagePackDecoder().decode(Doll.self, from: bytes) == doll)
        #expect(ThreadZone.keptOnThisThread == ThreadZone.keptDepth)
        for _ in 0 ..< 3 {
            #expect(try MessagePackDecoder().decode(Doll.self, from: bytes) == doll)
        }
        #expect(ThreadZone.keptOnThisThread == ThreadZone.keptDepth)
    }

    @Test func aDecodeNestedInAnotherLeavesTheOuterTreeIntact() throws {
        let value = Doll(levels: 2)
        let bytes = try MessagePackEncoder().encode(value)
        #expect(try MessagePackDecoder().decode(Doll.self, from: bytes) == value)
    }

    @Test func valuesDecodedOneAfterAnotherEachSeeTheirOwnBytes() throws {
        // A large value grows the zone past its first chunk; the small ones after it reuse it.
        let large = (0 ..< 20_000).map { "entry \($0)" }
        let sequence: [[String]] = [["first"], large, ["after the large one"], [], large, ["last"]]
        for value in sequence {
            let bytes = try MessagePackEncoder().encode(value)
            #expect(try MessagePackDecoder().decode([String].self, from: bytes) == value)
            #expect(try MessagePackValue(unpacking: bytes) == .array(value.map { .string($0) }))
        }
    }

    @Test func decodesOnManyThreadsAtOnceEachGetTheirOwnValue() async throws {
        let encoded = try (0 ..< 64).map { index in try MessagePackEncoder().encode(["index": [index], "square": [index * index]]) }
        let mismatches = await withTaskGroup(of: Int.self, returning: Int.self) { group in
            for (index, bytes) in encoded.enumerated() {
                group.addTask {
                    var wrong = 0
                    for _ in 0 ..< 200 {
                        let value = try? MessagePackDecoder().decode([String: [Int]].self, from: bytes)
                        if value != ["index": [index], "square": [index * index]] { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test func aFailedUnpackLeavesTheZoneUsableForTheNext() throws {
        let good = try MessagePackEncoder().encode(["ok"])
        #expect(throws: DecodingError.self) { try MessagePackDecoder().decode([String].self, from: [0x92, 0xA3, 0x61]) }
        #expect(try MessagePackDecoder().decode([String].self, from: good) == ["ok"])
    }
}
