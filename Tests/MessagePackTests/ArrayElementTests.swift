import Testing
@testable import MessagePack

/// Arrays of values coded through `encode(to:)`/`init(from:)`: both coders settle the element
/// type's form once per array and share one encoder node / coding path link between elements.
/// These check the bytes, the coding paths of errors and of coders that elements keep.
@Suite struct ArrayElementTests {
    let items = [Item(id: 1, name: "a", done: true), Item(id: -2, name: "bc", done: false), Item(id: 300, name: "", done: true)]

    /// The bytes msgpack-c packs for `items`, call by call.
    var packedItems: [UInt8] {
        let writer = MessagePackWriter()
        writer.packArrayHeader(items.count)
        for item in items {
            writer.packMapHeader(3)
            writer.packString("id"); writer.packInt(Int64(item.id))
            writer.packString("name"); writer.packString(item.name)
            writer.packString("done"); writer.packBool(item.done)
        }
        return writer.bytes
    }

    @Test func structElementsHaveExactBytesAndRoundTrip() throws {
        #expect(try encoded(items) == packedItems)
        #expect(try decoded([Item].self, packedItems) == items)
        #expect(try roundTrip([Item]()).value == [])
        #expect(try roundTrip([items[0]]).value == [items[0]])
    }

    @Test func enumElementsWithUnlabelledValuesHaveExactBytes() throws {
        let actions: [Step] = [.countUp, .add(5), .countUpAsync, .add(-300)]
        let writer = MessagePackWriter()
        writer.packArrayHeader(actions.count)
        for action in actions {
            writer.packMapHeader(1)
            switch action {
            case .countUp: writer.packString("countUp"); writer.packMapHeader(0)
            case .countUpAsync: writer.packString("countUpAsync"); writer.packMapHeader(0)
            case .add(let amount): writer.packString("add"); writer.packMapHeader(1); writer.packString("_0"); writer.packInt(Int64(amount))
            }
        }
        #expect(try encoded(actions) == writer.bytes)
        #expect(try decoded([Step].self, writer.bytes) == actions)
    }

    @Test func anElementThatFailsToDecodeNamesItsIndex() throws {
        let writer = MessagePackWriter()
        writer.packArrayHeader(3)
        for (index, item) in items.enumerated() {
            writer.packMapHeader(3)
            writer.packString("id")
            if index == 2 { writer.packString("three hundred") } else { writer.packInt(Int64(item.id)) }
            writer.packString("name"); writer.packString(item.name)
            writer.packString("done"); writer.packBool(item.done)
        }
        let error = try #require(decodingError { _ = try decoded([Item].self, writer.bytes) })
        #expect(error.kind == .typeMismatch)
        #expect(error.path == ["[2]", "id"])
    }

    @Test func anUnknownCaseInAnArrayIsNamedWithItsIndex() throws {
        let input = try MessagePackValue(jsonText: #"[{"countUp":{}},{"dance":{}}]"#).pack()
        let error = try #require(decodingError { _ = try decoded([Step].self, input) })
        #expect(error.kind == .typeMismatch)
        #expect(error.path == ["[1]"])
        #expect(error.message == "Unknown case 'dance'; the cases are countUp, countUpAsync, add.")
    }

    @Test func elementsThatKeepTheirDecoderKeepTheirOwnPath() throws {
        let input = try encoded([1, 2, 3].map { Item(id: $0, name: "", done: false) })
        let kept = try decoded([KeepsDecoder].self, input)
        #expect(kept.map { $0.decoder.codingPath.map { $0.intValue } } == [[0], [1], [2]])
    }

    @Test func anElementThatFailsToEncodeNamesItsIndex() throws {
        let values = [Refuses(refuse: false), Refuses(refuse: false), Refuses(refuse: true)]
        do {
            _ = try encoded(values)
            Issue.record("expected an EncodingError")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(context.codingPath.map { $0.intValue } == [2])
        }
    }

    @Test func elementsThatKeepTheirEncoderKeepTheirOwnPath() throws {
        let keeper = EncoderKeeper()
        let bytes = try encoded(Array(repeating: KeepsEncoder(keeper: keeper), count: 3))
        // Each element read the paths of the encoders kept before it while it was encoded.
        #expect(keeper.paths == [[], [0], [0, 1]])
        #expect(bytes == [0x93, 0x80, 0x80, 0x80])
    }
}

/// A synthesised enum with an unlabelled associated value (coded under `_0`).
enum Step: Codable, Equatable {
    case countUp, countUpAsync, add(Int)
}

/// Keeps the decoder it was decoded with.
struct KeepsDecoder: Decodable {
    let decoder: any Decoder

    init(from decoder: any Decoder) throws {
        self.decoder = decoder
        _ = try decoder.container(keyedBy: MessagePackKey.self)
    }
}

/// Throws from `encode(to:)` when `refuse` is set, after writing a key.
struct Refuses: Encodable {
    let refuse: Bool

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MessagePackKey.self)
        try container.encode(1, forKey: .string("a"))
        if refuse { throw EncodingError.invalidValue(refuse, .init(codingPath: encoder.codingPath, debugDescription: "refused")) }
    }
}

/// The encoders of `KeepsEncoder` values, and what their paths were when later ones were encoded.
final class EncoderKeeper {
    var encoders: [any Encoder] = []
    var paths: [[Int?]] = []
}

/// Keeps its encoder and records the paths of the encoders kept before it.
struct KeepsEncoder: Encodable {
    let keeper: EncoderKeeper

    func encode(to encoder: any Encoder) throws {
        keeper.paths.append(keeper.encoders.map { $0.codingPath.last?.intValue })
        keeper.encoders.append(encoder)
        _ = encoder.container(keyedBy: MessagePackKey.self)
    }
}
