import Testing
import MessagePack

/// The package's view of unpacked values for fixed-shape records: each accessor gives the value
/// only for its own wire type, a key found twice is no key, and bytes that are not one whole
/// value throw before any view exists.
@Suite struct MessagePackViewTests {
    let record = MessagePackValue.map([
        (.string("name"), .string("worker-é")),
        (.string("count"), .uint(70_000)),
        (.string("below"), .int(-3)),
        (.string("payload"), .binary([1, 2, 3])),
        (.string("nested"), .map([(.string("inner"), .uint(5))])),
        (.uint(9), .string("integer key")),
    ])

    @Test func eachAccessorReadsItsOwnTypeOnly() throws {
        try MessagePackView.read(record.pack()) { root in
            #expect(root.mapCount == 6)
            #expect(root.key(at: 0).isString("name"))
            #expect(!root.key(at: 0).isString("nam"))
            #expect(root.value(at: 0).string == "worker-é")
            #expect(root.value(forKey: "count")?.uint == 70_000)
            #expect(root.value(forKey: "payload")?.binary == [1, 2, 3])
            #expect(root.value(forKey: "nested")?.value(forKey: "inner")?.uint == 5)
            #expect(root.key(at: 5).uint == 9)
            // Other types are nil, never converted.
            #expect(root.value(forKey: "below")?.uint == nil)
            #expect(root.value(forKey: "name")?.binary == nil)
            #expect(root.value(forKey: "payload")?.string == nil)
            #expect(root.value(forKey: "count")?.mapCount == nil)
            #expect(root.value(forKey: "count")?.value(forKey: "anything") == nil)
            #expect(root.value(forKey: "missing") == nil)
        }
    }

    @Test func aKeyFoundTwiceIsNoKey() throws {
        let twice = MessagePackValue.map([(.string("seq"), .uint(1)), (.string("seq"), .uint(2)), (.string("other"), .uint(3))])
        try MessagePackView.read(twice.pack()) { root in
            #expect(root.value(forKey: "seq") == nil)
            #expect(root.value(forKey: "other")?.uint == 3)
        }
    }

    @Test func aStringThatIsNotUTF8IsNoString() throws {
        // fixstr of two bytes: an unfinished two-byte sequence, then a plain byte.
        try MessagePackView.read([0xA2, 0xC3, 0x41]) { root in
            #expect(root.string == nil)
            #expect(!root.isString("A"))
        }
    }

    @Test func bytesThatAreNotOneWholeValueThrow() {
        var calls = 0
        for bytes: [UInt8] in [[], [0xC1], [0x92, 0x01], [0x01, 0x02], [0xDD, 0xFF, 0xFF, 0xFF, 0xFF]] {
            #expect(throws: DecodingError.self) { try MessagePackView.read(bytes) { _ in calls += 1 } }
        }
        #expect(calls == 0)
    }
}
