import Testing
@testable import MessagePack

/// An enum value whose map names no case of the enum: the error says which key was found and
/// which cases there are, instead of Swift's "Invalid number of keys found, expected one."
@Suite struct UnknownEnumCaseTests {
    enum Solo: Codable, Equatable { case only(x: Int) }

    /// Cases renamed on the wire: the known cases are listed as the wire spells them.
    enum Renamed: Codable, Equatable {
        case countUp, countDown
        enum CodingKeys: String, CodingKey { case countUp = "count_up", countDown = "count_down" }
    }

    enum Carrier: Codable, Equatable { case ground, air, sea }
    struct Shipment: Codable, Equatable { var id: Int; var legs: [Carrier] }

    /// The `DecodingError.typeMismatch` of decoding `json` as `T`: its type, path, text and cause.
    func mismatch<T: Decodable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (type: Any.Type, path: [String], text: String, cause: UnknownEnumCase?) {
        let error = try #require(decodingError({ _ = try decoded(T.self, MessagePackValue(jsonText: json).pack()) }, sourceLocation: sourceLocation), sourceLocation: sourceLocation)
        guard case .typeMismatch(let found, let context) = error else {
            Issue.record("expected typeMismatch, got \(error)", sourceLocation: sourceLocation)
            return (Never.self, [], "", nil)
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        return (found, path, context.debugDescription, context.underlyingError as? UnknownEnumCase)
    }

    @Test func anUnknownCaseIsNamedWithTheKnownOnesInDeclarationOrder() throws {
        let found = try mismatch(Action.self, #"{"dance":{"steps":3}}"#)
        #expect(ObjectIdentifier(found.type) == ObjectIdentifier(Action.self))
        #expect(found.path == [])
        #expect(found.text == "Unknown case 'dance'; the cases are countUp, add, rename.")
        #expect(found.cause == UnknownEnumCase(name: "dance", knownCases: ["countUp", "add", "rename"]))
    }

    @Test func eachCallNamesItsOwnUnknownCase() throws {
        // A thread keeps its decoding context between calls: what one call noted of an unknown
        // case is not the next call's.
        let first = try mismatch(Action.self, #"{"dance":{"steps":3}}"#)
        #expect(first.text == "Unknown case 'dance'; the cases are countUp, add, rename.")
        #expect(try decoded(Action.self, MessagePackValue(jsonText: #"{"countUp":{}}"#).pack()) == .countUp)
        let second = try mismatch(Action.self, #"{"sing":{}}"#)
        #expect(second.text == "Unknown case 'sing'; the cases are countUp, add, rename.")
        let swifts = try mismatch(Action.self, #"{}"#)
        #expect(swifts.cause == nil)
    }

    @Test func anEnumOfOneCaseListsItsCase() throws {
        let found = try mismatch(Solo.self, #"{"other":{"x":1}}"#)
        #expect(found.text == "Unknown case 'other'; the cases are only.")
        #expect(found.cause == UnknownEnumCase(name: "other", knownCases: ["only"]))
    }

    @Test func renamedCasesAreListedAsTheWireSpellsThem() throws {
        #expect(try decoded(Renamed.self, MessagePackValue(jsonText: #"{"count_down":{}}"#).pack()) == .countDown)
        let found = try mismatch(Renamed.self, #"{"countDown":{}}"#)
        #expect(found.text == "Unknown case 'countDown'; the cases are count_up, count_down.")
    }

    @Test func anUnknownCaseDeepInsideAValueKeepsItsPath() throws {
        let found = try mismatch(Shipment.self, #"{"id":7,"legs":[{"air":{}},{"drone":{}},{"sea":{}}]}"#)
        #expect(ObjectIdentifier(found.type) == ObjectIdentifier(Carrier.self))
        #expect(found.path == ["legs", "[1]"])
        #expect(found.text == "Unknown case 'drone'; the cases are ground, air, sea.")
        #expect(found.cause == UnknownEnumCase(name: "drone", knownCases: ["ground", "air", "sea"]))
    }

    @Test func mapsThatAreNotOneUnknownKeyKeepSwiftsMessage() throws {
        for json in [#"{}"#, #"{"dance":{},"sing":{}}"#, #"{"countUp":{},"add":{"amount":1}}"#] {
            let found = try mismatch(Action.self, json)
            #expect(found.text == "Invalid number of keys found, expected one.", "\(json)")
            #expect(found.cause == nil, "\(json)")
        }
    }

    @Test func theCasesOfOnlyAPlainEnumAreRead() {
        enum Three: CodingKey { case a, b, c }
        enum One: CodingKey { case only }
        /// One byte with spare values (a Bool), but not an enum.
        struct Flag: CodingKey {
            var flag: Bool
            init?(stringValue: String) { flag = stringValue == "on" }
            init?(intValue: Int) { nil }
            var stringValue: String { flag ? "on" : "off" }
            var intValue: Int? { nil }
        }
        /// No bytes at all, and not an enum.
        struct Nothing: CodingKey {
            init?(stringValue: String) {}
            init?(intValue: Int) { nil }
            var stringValue: String { "nothing" }
            var intValue: Int? { nil }
        }
        #expect(CodingKeyCases.names(of: Three.self, isInhabited: true) == ["a", "b", "c"])
        #expect(CodingKeyCases.names(of: Three.self, isInhabited: false) == ["a", "b", "c"])
        #expect(CodingKeyCases.names(of: One.self, isInhabited: true) == ["only"])
        #expect(CodingKeyCases.names(of: One.self, isInhabited: false) == nil)
        #expect(CodingKeyCases.names(of: Flag.self, isInhabited: true) == nil)
        #expect(CodingKeyCases.names(of: Nothing.self, isInhabited: true) == nil)
        #expect(CodingKeyCases.names(of: MessagePackKey.self, isInhabited: true) == nil)
        #expect(CodingKeyCases.names(of: AnyKey.self, isInhabited: true) == nil)
    }

    /// A string key of any name (16 bytes and more).
    struct AnyKey: CodingKey {
        var stringValue: String
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
        var intValue: Int? { nil }
    }
}
