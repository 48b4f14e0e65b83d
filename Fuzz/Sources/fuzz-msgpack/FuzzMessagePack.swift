import Foundation
import FuzzSupport
import MessagePack
import ReactorApps
import ReactorBus
import ReactorCore

// Fuzzes the MessagePack decoder (and, through round trips, the encoder and the JSON bridge).
//
// Each input is one MessagePack document. It is decoded as `MessagePackValue` and as every type
// below; the checks (any failure traps, so libFuzzer keeps the input):
//  1. decoding never traps, and only ever throws `DecodingError`;
//  2. whatever decodes encodes again, that encoding decodes, and re-encoding the second value
//     gives the same bytes (the codec is a fixed point after one hop: nothing is lost or changed);
//  3. the input and its canonical repacking (`MessagePackValue(unpacking:).pack()`, smallest
//     forms) decode the same way as every type: both fail, or both give the same value;
//  4. `MessagePackValue`: unpack(pack(v)) == v, and pack is canonical (pack(unpack(pack(v))) is
//     the same bytes);
//  5. JSON: v.jsonText() parses back (unless only the extension-to-object rewrite made it too
//     deep), and printing the parsed value gives the same text; input bytes that are UTF-8 are
//     also parsed as JSON text, and a parsed value packs and unpacks to itself.

// MARK: Types decoded from every input

/// Every scalar form the decoder reads directly.
struct Scalars: Codable {
    var flag: Bool
    var small: Int8
    var short: Int16
    var word: Int32
    var long: Int64
    var int: Int
    var ubyte: UInt8
    var ushort: UInt16
    var uword: UInt32
    var ulong: UInt64
    var uint: UInt
    var single: Float
    var double: Double
    var text: String
    var maybe: Int?
}

/// Enum cases with and without associated values, labelled and not, recursive.
indirect enum Shape: Codable {
    case empty
    case point(x: Int, y: Int)
    case label(String)
    case scaled(Shape, factor: Double)
    case group([Shape])
    case tagged(id: UInt8?, Shape?)
}

/// A string-keyed enum usable as a dictionary key (the `CodingKeyRepresentable` path).
enum Color: String, Codable, CodingKeyRepresentable, Hashable {
    case red, green, blue
}

/// A struct key: dictionaries with it use Swift's flat `[k1, v1, k2, v2, ...]` form.
struct Cell: Codable, Hashable {
    var row: Int16
    var column: Int16
}

/// The Foundation types with dedicated forms, optionals, collections, nesting.
struct Document: Codable {
    var id: UUID
    var created: Date
    var title: String?
    var tags: [String]
    var bytes: [UInt8]
    var data: Data
    var byName: [String: Int]
    var byNumber: [Int: String]
    var byColor: [Color: Bool]?
    var byCell: [Cell: String]?
    var matrix: [[Int8]]
    var shapes: [Shape]
    var extra: MessagePackValue?
    var children: [Document]
}

/// Hand-written containers: nested keyed and unkeyed, super coders, single values.
struct Custom: Codable {
    var name: String
    var values: [Int64]
    var inner: Cell
    var base: Shape

    enum CodingKeys: String, CodingKey { case name, list, inner, base }
    enum InnerKeys: String, CodingKey { case row, column }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        var list = try container.nestedUnkeyedContainer(forKey: .list)
        var values: [Int64] = []
        while !list.isAtEnd { values.append(try list.decode(Int64.self)) }
        self.values = values
        let inner = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        self.inner = Cell(row: try inner.decode(Int16.self, forKey: .row), column: try inner.decode(Int16.self, forKey: .column))
        base = try Shape(from: try container.superDecoder(forKey: .base))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        for value in values { try list.encode(value) }
        var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        try inner.encode(self.inner.row, forKey: .row)
        try inner.encode(self.inner.column, forKey: .column)
        try base.encode(to: container.superEncoder(forKey: .base))
    }
}

/// A single-value wrapper around an unkeyed container with a nested keyed one inside.
struct Wrapped: Codable {
    var pairs: [(String, Int?)]

    init(from decoder: any Decoder) throws {
        var outer = try decoder.unkeyedContainer()
        var pairs: [(String, Int?)] = []
        while !outer.isAtEnd {
            var pair = try outer.nestedUnkeyedContainer()
            let key = try pair.decode(String.self)
            let value = try pair.decodeNil() ? nil : try pair.decode(Int.self)
            pairs.append((key, value))
        }
        self.pairs = pairs
    }

    func encode(to encoder: any Encoder) throws {
        var outer = encoder.unkeyedContainer()
        for (key, value) in pairs {
            var pair = outer.nestedUnkeyedContainer()
            try pair.encode(key)
            if let value { try pair.encode(value) } else { try pair.encodeNil() }
        }
    }
}

// MARK: Checks

let decoder = MessagePackDecoder()
let encoder = MessagePackEncoder()

func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// Checks 1-3 for one type. `canonical` is the input repacked by `MessagePackValue`, when it unpacks.
func roundTrip<T: Codable>(_: T.Type, _ input: UnsafeRawBufferPointer, canonical: [UInt8]?) {
    let first: T
    do {
        first = try decoder.decode(T.self, from: input)
    } catch {
        fuzzCheck(error is DecodingError, "decoding \(T.self) threw a \(type(of: error)), not a DecodingError: \(error)")
        if let canonical, (try? decoder.decode(T.self, from: canonical)) != nil {
            fuzzFailure("\(T.self): the input does not decode (\(error)) but its canonical form \(hex(canonical)) does", input: input)
        }
        return
    }
    let encoded: [UInt8]
    do {
        encoded = try encoder.encode(first)
    } catch {
        fuzzFailure("decoded a \(T.self) that does not encode again: \(error)", input: input)
    }
    let second: T
    do {
        second = try decoder.decode(T.self, from: encoded)
    } catch {
        fuzzFailure("the encoding \(hex(encoded)) of a decoded \(T.self) does not decode: \(error)", input: input)
    }
    if fuzzVerbose { print("  decodes as \(T.self)") }
    guard let reencoded = try? encoder.encode(second) else { fuzzFailure("\(T.self) re-encode failed", input: input) }
    fuzzCheck(reencoded == encoded, "\(T.self) changed in a round trip: \(hex(encoded)) then \(hex(reencoded))")
    if let canonical {
        do {
            let fromCanonical = try decoder.decode(T.self, from: canonical)
            let bytes = try encoder.encode(fromCanonical)
            fuzzCheck(bytes == encoded, "\(T.self) from the canonical form \(hex(canonical)) encodes as \(hex(bytes)), from the input as \(hex(encoded))")
        } catch {
            fuzzFailure("\(T.self) decodes from the input but not from its canonical form \(hex(canonical)): \(error)", input: input)
        }
    }
}

/// `roundTrip` plus value equality, for types without floating point (NaN != NaN).
func roundTripEquatable<T: Codable & Equatable>(_: T.Type, _ input: UnsafeRawBufferPointer, canonical: [UInt8]?) {
    roundTrip(T.self, input, canonical: canonical)
    guard let first = try? decoder.decode(T.self, from: input),
          let second = try? decoder.decode(T.self, from: encoder.encode(first)) else { return }
    fuzzCheck(first == second, "\(T.self) round trip changed the value: \(first) then \(second)")
}

/// Container depth as JSON sees it: an extension becomes an object, so it adds a level.
func jsonDepth(_ value: MessagePackValue) -> Int {
    switch value {
    case .array(let elements): 1 + (elements.map(jsonDepth).max() ?? 0)
    case .map(let entries): 1 + (entries.map { max(jsonDepth($0.key), jsonDepth($0.value)) }.max() ?? 0)
    case .extension: 1
    default: 0
    }
}

/// Whether `parsed`, read back from the JSON text of `original`, is what the documented mapping
/// promises: numbers equal (a float32 as the double nearest its shortest decimal, so as a `Float`
/// again), NaN and infinities `null`, bin base64, timestamps RFC 3339, extensions
/// `{"data", "type"}` objects, map keys named as `jsonKeyName` names them, in key order when `sorted`.
func jsonEquivalent(_ original: MessagePackValue, _ parsed: MessagePackValue, sorted: Bool) -> Bool {
    switch (original, parsed) {
    case (.nil, .nil): return true
    case let (.bool(a), .bool(b)): return a == b
    case let (.uint(a), .uint(b)): return a == b
    case let (.int(a), .int(b)): return a == b && a < 0
    case let (.float(a), .double(b)): return a.isFinite && Float(b) == a
    case let (.float(a), .nil): return !a.isFinite
    case let (.double(a), .double(b)): return a.isFinite && a == b
    case let (.double(a), .nil): return !a.isFinite
    case let (.string(a), .string(b)): return a == b
    case let (.binary(a), .string(b)): return Data(base64Encoded: b).map { [UInt8]($0) } == a
    case (.timestamp, .string(let text)): return text == original.jsonText().dropFirst().dropLast().description
    case let (.extension(type, data), .map(entries)):
        guard entries.count == 2, entries[0].key == .string("data"), entries[1].key == .string("type"),
              case .string(let base64) = entries[0].value, Data(base64Encoded: base64).map({ [UInt8]($0) }) == data else { return false }
        switch entries[1].value {
        case .uint(let number): return Int64(type) == Int64(exactly: number)
        case .int(let number): return Int64(type) == number
        default: return false
        }
    case let (.array(a), .array(b)):
        return a.count == b.count && zip(a, b).allSatisfy { jsonEquivalent($0, $1, sorted: sorted) }
    case let (.map(a), .map(b)):
        var expected = a.map { (name: $0.key.jsonKeyName(sortedKeys: sorted), value: $0.value) }
        if sorted { expected.sort { $0.name < $1.name } }
        guard expected.count == b.count else { return false }
        for (want, got) in zip(expected, b) {
            guard got.key == .string(want.name), jsonEquivalent(want.value, got.value, sorted: sorted) else { return false }
        }
        return true
    default:
        return false
    }
}

/// Check 5 for a value: its JSON text parses back to the documented equivalent, and printing that
/// again gives the same text (JSON is a fixed point after one hop).
func jsonRoundTrip(_ value: MessagePackValue) {
    for sorted in [true, false] {
        let text = value.jsonText(sortedKeys: sorted)
        let parsed: MessagePackValue
        do {
            parsed = try MessagePackValue(jsonText: text)
        } catch {
            if jsonDepth(value) > MessagePack.maximumNestingDepth { continue }
            fuzzFailure("jsonText() output does not parse: \(error)\ntext: \(text)")
        }
        fuzzCheck(jsonEquivalent(value, parsed, sorted: sorted), "JSON round trip changed the value: \(value) then \(parsed)\ntext: \(text)")
        let again = parsed.jsonText(sortedKeys: sorted)
        guard let reparsed = try? MessagePackValue(jsonText: again) else { fuzzFailure("jsonText() of a parsed value does not parse: \(again)") }
        fuzzCheck(reparsed == parsed && reparsed.jsonText(sortedKeys: sorted) == again, "JSON text is not a fixed point:\n\(again)\n\(reparsed.jsonText(sortedKeys: sorted))")
    }
}

/// Check 4 for a value.
func packRoundTrip(_ value: MessagePackValue, input: UnsafeRawBufferPointer) -> [UInt8] {
    let packed = value.pack()
    do {
        let unpacked = try MessagePackValue(unpacking: packed)
        fuzzCheck(unpacked == value, "MessagePackValue changed in pack/unpack: \(value) then \(unpacked)")
        fuzzCheck(unpacked.pack() == packed, "pack is not canonical: \(hex(packed)) then \(hex(unpacked.pack()))")
        // Typed decoding of MessagePackValue goes through the Codable path.
        let typed = try decoder.decode(MessagePackValue.self, from: packed)
        fuzzCheck(typed == value, "MessagePackDecoder and MessagePackValue(unpacking:) disagree: \(typed) vs \(value)")
        let encoded = try encoder.encode(value)
        fuzzCheck(encoded == packed, "MessagePackEncoder and pack() disagree for \(value)")
    } catch {
        fuzzFailure("the packing \(hex(packed)) of an unpacked value does not unpack: \(error)", input: input)
    }
    return packed
}

func fuzzOne(_ input: UnsafeRawBufferPointer) {
    // Check 4 and 5 on the generic value.
    var canonical: [UInt8]?
    do {
        let value = try MessagePackValue(unpacking: input)
        canonical = packRoundTrip(value, input: input)
        jsonRoundTrip(value)
    } catch {
        fuzzCheck(error is DecodingError, "MessagePackValue(unpacking:) threw a \(type(of: error)): \(error)")
    }

    // Checks 1-3 on typed values.
    roundTrip(Scalars.self, input, canonical: canonical)
    roundTrip(Shape.self, input, canonical: canonical)
    roundTrip(Document.self, input, canonical: canonical)
    roundTrip(Custom.self, input, canonical: canonical)
    roundTrip(Wrapped.self, input, canonical: canonical)
    roundTrip([Shape?].self, input, canonical: canonical)
    roundTrip([String: [Double]].self, input, canonical: canonical)
    roundTrip(Date.self, input, canonical: canonical)
    roundTripEquatable([Int: [UInt8]].self, input, canonical: canonical)
    roundTripEquatable([Color: UUID].self, input, canonical: canonical)
    roundTripEquatable([Cell: Data].self, input, canonical: canonical)
    roundTripEquatable(Counter.Action.self, input, canonical: canonical)
    roundTripEquatable(Counter.State.self, input, canonical: canonical)
    roundTripEquatable(Primes.Action.self, input, canonical: canonical)
    roundTripEquatable(Primes.Mutation.self, input, canonical: canonical)
    roundTripEquatable(Primes.Effect.self, input, canonical: canonical)
    roundTripEquatable(Primes.State.self, input, canonical: canonical)
    roundTripEquatable(ClientLedger.self, input, canonical: canonical)
    roundTripEquatable(AuthorityRecord.self, input, canonical: canonical)
    roundTrip(SequencerCheckpoint<Primes>.self, input, canonical: canonical)
    roundTrip(AuthorityCheckpoint<Counter>.self, input, canonical: canonical)

    // Check 5 on the input read as JSON text.
    if let text = String(validating: input, as: UTF8.self),
       let value = try? MessagePackValue(jsonText: text) {
        if fuzzVerbose { print("  parses as JSON") }
        _ = packRoundTrip(value, input: input)
        jsonRoundTrip(value)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

@main
enum FuzzMessagePack {
    static func main() { FuzzDriver.main(fuzz) }
}
