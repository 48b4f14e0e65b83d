#if canImport(Glibc)
import Glibc
#endif
import MessagePack

// Encodes and decodes a representative snapshot through the Codable path and
// through hand-written msgpack-c calls, and prints ops/s and the ratios.
// Usage: msgpack-bench [iterations per round] [phase]   (5 rounds, best round counts)
// With a phase (hand-encode, codable-encode, hand-decode, codable-decode,
// hand-decode-catalog, codable-decode-catalog, hand-encode-catalog, codable-encode-catalog,
// hand-encode-action, codable-encode-action, hand-decode-action, codable-decode-action,
// remembered-encode-action, remembered-decode-action)
// only that operation runs, once per
// iteration: for `valgrind --tool=callgrind`, whose instruction counts are stable on a
// busy machine where timings are not.
//
// The catalog rows decode a large collection of small values (100,000 entries of an
// `[Int: String]`, the shape of the `catalog` app's state): one operation decodes it all,
// and the rows give ns per entry. They run iterations / 2,000 times per round (at least 1).
//
// The action rows encode and decode one small synthesised `Codable` enum per operation (the
// authority decodes one per action), cycling through `BenchAction.samples`; they run
// iterations × 20 times per round. The `Codable` rows run it every time (`remembersPlainValues`
// off); the `remembered` rows use the coders as nodes do, which run `Codable` once per distinct
// small plain value and thread (these four samples) and give the remembered result after.

let arguments = Array(CommandLine.arguments.dropFirst())
let iterations = arguments.first.flatMap { Int($0) } ?? 20_000
let phase = arguments.dropFirst().first
let rounds = phase == nil ? 5 : 1
let snapshot = BenchSnapshot.sample()
let encoder = MessagePackEncoder()
let decoder = MessagePackDecoder()
let handWritten = HandWrittenCodec()
let reusedWriter = MessagePackWriter()
// A single phase other than a catalog one builds only a token catalog, so that callgrind's
// counts are of that phase rather than of building and checking 100,000 entries.
let catalog = BenchCatalog.sample(entries: (phase?.hasSuffix("-catalog") ?? true) ? 100_000 : 10)
let catalogIterations = max(1, iterations / 2_000)
let actions = BenchAction.samples
let actionEncoder = MessagePackEncoder(remembersPlainValues: false)
let actionDecoder = MessagePackDecoder(remembersPlainValues: false)
let actionIterations = iterations * 20

/// Keeps results observable so the optimiser cannot drop the work.
nonisolated(unsafe) var sink = 0

/// Best ops/s over `rounds` rounds of `iterations` calls.
func measure(iterations: Int = iterations, _ body: () throws -> Int) rethrows -> Double {
    var best = Duration.seconds(1_000_000)
    for _ in 0 ..< rounds {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0 ..< iterations { sink &+= try body() }
        best = min(best, clock.now - start)
    }
    let seconds = Double(best.components.seconds) + Double(best.components.attoseconds) / 1e18
    return Double(iterations) / seconds
}

func report(_ label: String, _ opsPerSecond: Double) {
    let padded = label.padding(toLength: 44, withPad: " ", startingAt: 0)
    print("\(padded)\(String(Int(opsPerSecond.rounded())).leftPadded(10)) ops/s")
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

func ratio(_ baseline: Double, _ candidate: Double) -> String {
    let value = (baseline / candidate * 100).rounded() / 100
    return "\(value)x"
}

do {
    let codableBytes = try encoder.encode(snapshot)
    let handBytes = handWritten.encode(snapshot)
    guard codableBytes == handBytes,
          try decoder.decode(BenchSnapshot.self, from: codableBytes) == snapshot,
          try handWritten.decode(handBytes) == snapshot else {
        print("error: the Codable and hand-written paths disagree")
        exit(1)
    }
    let catalogBytes = try encoder.encode(catalog)
    guard try decoder.decode(BenchCatalog.self, from: catalogBytes) == catalog,
          try handWritten.decodeCatalog(catalogBytes) == catalog, handWritten.encodeCatalog(catalog) == catalogBytes else {
        print("error: the Codable and hand-written paths disagree on the catalog")
        exit(1)
    }
    let actionBytes = try actions.map { try encoder.encode($0) }
    guard try actions.indices.allSatisfy({ index in
        try actionBytes[index] == handWritten.encodeAction(actions[index])
            && decoder.decode(BenchAction.self, from: actionBytes[index]) == actions[index]
            && handWritten.decodeAction(actionBytes[index]) == actions[index]
    }) else {
        print("error: the Codable and hand-written paths disagree on the actions")
        exit(1)
    }
    /// The action of operation number `sink`'s low bits: a different one each time.
    func actionIndex() -> Int { Int(UInt(bitPattern: sink) % UInt(actions.count)) }
    if let phase {
        for _ in 0 ..< (phase.hasSuffix("-action") ? actionIterations : iterations) {
            switch phase {
            case "hand-encode": sink &+= handWritten.encode(snapshot).count
            case "codable-encode": sink &+= try encoder.encode(snapshot).count
            case "hand-decode": sink &+= try handWritten.decode(handBytes).items.count
            case "codable-decode": sink &+= try decoder.decode(BenchSnapshot.self, from: codableBytes).items.count
            case "hand-decode-catalog": sink &+= try handWritten.decodeCatalog(catalogBytes).entries.count
            case "codable-decode-catalog": sink &+= try decoder.decode(BenchCatalog.self, from: catalogBytes).entries.count
            case "hand-encode-catalog": sink &+= handWritten.encodeCatalog(catalog).count
            case "codable-encode-catalog": sink &+= try encoder.encode(catalog).count
            case "hand-encode-action": sink &+= handWritten.encodeAction(actions[actionIndex()]).count &+ 1
            case "codable-encode-action": sink &+= try actionEncoder.encode(actions[actionIndex()]).count &+ 1
            case "hand-decode-action": sink &+= try handWritten.decodeAction(actionBytes[actionIndex()]) == .countUp ? 1 : 2
            case "codable-decode-action": sink &+= try actionDecoder.decode(BenchAction.self, from: actionBytes[actionIndex()]) == .countUp ? 1 : 2
            case "remembered-encode-action": sink &+= try encoder.encode(actions[actionIndex()]).count &+ 1
            case "remembered-decode-action": sink &+= try decoder.decode(BenchAction.self, from: actionBytes[actionIndex()]) == .countUp ? 1 : 2
            default: print("unknown phase \(phase)"); exit(2)
            }
        }
        exit(0)
    }
    print("snapshot: \(snapshot.items.count) items, \(codableBytes.count) bytes; \(iterations) iterations x \(rounds) rounds (best)")

    let handEncode = measure { handWritten.encode(snapshot).count }
    let codableEncode = try measure { try encoder.encode(snapshot).count }
    let codableEncodeReused = try measure {
        reusedWriter.reset()
        try encoder.encode(snapshot, into: reusedWriter)
        return reusedWriter.count
    }
    let handDecode = try measure { try handWritten.decode(handBytes).items.count }
    let codableDecode = try measure { try decoder.decode(BenchSnapshot.self, from: codableBytes).items.count }

    let handCatalog = try measure(iterations: catalogIterations) { try handWritten.decodeCatalog(catalogBytes).entries.count }
    let codableCatalog = try measure(iterations: catalogIterations) { try decoder.decode(BenchCatalog.self, from: catalogBytes).entries.count }
    let handCatalogEncode = measure(iterations: catalogIterations) { handWritten.encodeCatalog(catalog).count }
    let codableCatalogEncode = try measure(iterations: catalogIterations) { try encoder.encode(catalog).count }

    let handActionEncode = measure(iterations: actionIterations) { handWritten.encodeAction(actions[actionIndex()]).count &+ 1 }
    let codableActionEncode = try measure(iterations: actionIterations) { try actionEncoder.encode(actions[actionIndex()]).count &+ 1 }
    let rememberedActionEncode = try measure(iterations: actionIterations) { try encoder.encode(actions[actionIndex()]).count &+ 1 }
    let handActionDecode = try measure(iterations: actionIterations) {
        try handWritten.decodeAction(actionBytes[actionIndex()]) == .countUp ? 1 : 2
    }
    let codableActionDecode = try measure(iterations: actionIterations) {
        try actionDecoder.decode(BenchAction.self, from: actionBytes[actionIndex()]) == .countUp ? 1 : 2
    }
    let rememberedActionDecode = try measure(iterations: actionIterations) {
        try decoder.decode(BenchAction.self, from: actionBytes[actionIndex()]) == .countUp ? 1 : 2
    }

    report("encode  hand-written msgpack-c", handEncode)
    report("encode  Codable -> [UInt8]", codableEncode)
    report("encode  Codable into reused writer", codableEncodeReused)
    report("decode  hand-written msgpack-c", handDecode)
    report("decode  Codable", codableDecode)
    print("encode ratio (hand / Codable): \(ratio(handEncode, codableEncode)) (reused writer: \(ratio(handEncode, codableEncodeReused))), goal <= 2x")
    print("decode ratio (hand / Codable): \(ratio(handDecode, codableDecode)), goal <= 2.5x")
    print("catalog: \(catalog.entries.count) entries of 64 characters, \(catalogBytes.count) bytes; \(catalogIterations) iterations x \(rounds) rounds (best)")
    func perEntry(_ opsPerSecond: Double) -> String { "\(Int((1e9 / opsPerSecond / Double(catalog.entries.count)).rounded())) ns/entry" }
    report("decode catalog  hand-written msgpack-c", handCatalog)
    print("    \(perEntry(handCatalog))")
    report("decode catalog  Codable", codableCatalog)
    print("    \(perEntry(codableCatalog))")
    print("catalog decode ratio (hand / Codable): \(ratio(handCatalog, codableCatalog))")
    report("encode catalog  hand-written msgpack-c", handCatalogEncode)
    print("    \(perEntry(handCatalogEncode))")
    report("encode catalog  Codable", codableCatalogEncode)
    print("    \(perEntry(codableCatalogEncode))")
    print("catalog encode ratio (hand / Codable): \(ratio(handCatalogEncode, codableCatalogEncode))")
    print("action: a synthesised Codable enum, \(actionBytes.map(\.count).reduce(0, +) / actions.count) bytes on average; \(actionIterations) iterations x \(rounds) rounds (best)")
    report("encode action  hand-written msgpack-c", handActionEncode)
    report("encode action  Codable", codableActionEncode)
    report("decode action  hand-written msgpack-c", handActionDecode)
    report("decode action  Codable", codableActionDecode)
    report("encode action  remembered plain value", rememberedActionEncode)
    report("decode action  remembered plain value", rememberedActionDecode)
    print("action encode ratio (hand / Codable): \(ratio(handActionEncode, codableActionEncode)), remembered: \(ratio(handActionEncode, rememberedActionEncode))")
    print("action decode ratio (hand / Codable): \(ratio(handActionDecode, codableActionDecode)), remembered: \(ratio(handActionDecode, rememberedActionDecode))")
    if sink == 42 { print("") }
} catch {
    print("error: \(error)")
    exit(1)
}
