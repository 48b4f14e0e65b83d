import Foundation
import Testing
@testable import MessagePack

/// Interoperability with Python's `msgpack` package, in both directions.
@Suite struct CrossLanguageTests {
    static var fixtures: URL {
        get throws {
            try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil), "Fixtures resource missing")
        }
    }

    struct VectorFile: Codable {
        var generator: String?
        var vectors: [Vector]
    }

    struct Vector: Codable {
        var name: String
        var hex: String
        var value: TypedValue
    }

    // MARK: Python → Swift

    @Test func pythonVectorsDecodeToTheirValues() throws {
        let data = try Data(contentsOf: try Self.fixtures.appendingPathComponent("vectors.json"))
        let file = try JSONDecoder().decode(VectorFile.self, from: data)
        #expect(file.vectors.count >= 50)
        for vector in file.vectors {
            let input = bytes(vector.hex)
            let value = try MessagePackValue(unpacking: input)
            #expect(value == vector.value.value, "\(vector.name)")
            if case .double(let double) = vector.value.value, double.isNaN {
                #expect({ if case .double(let got) = value { return got.isNaN } else { return false } }(), "\(vector.name)")
            }
            // Python also packs in the smallest form, so re-packing is byte-identical.
            #expect(value.pack() == input, "\(vector.name)")
        }
    }

    @Test func pythonSnapshotDecodesIntoSwiftTypes() throws {
        let data = try Data(contentsOf: try Self.fixtures.appendingPathComponent("vectors.json"))
        let file = try JSONDecoder().decode(VectorFile.self, from: data)
        let vector = try #require(file.vectors.first { $0.name == "snapshot" })
        let snapshot = try decoded(Snapshot.self, bytes(vector.hex))
        #expect(snapshot == Snapshot(version: 3, counter: -42, items: [
            Item(id: 0, name: "item-00000000000", done: true),
            Item(id: 1, name: "item-00000000001", done: false),
            Item(id: 2, name: "item-00000000002", done: true),
        ]))
        let date = try #require(file.vectors.first { $0.name == "timestamp64" })
        #expect(try decoded(Date.self, bytes(date.hex)) == Date(timeIntervalSince1970: 1_700_000_000.5))
        let intKeys = try #require(file.vectors.first { $0.name == "int keys" })
        #expect(try decoded([Int: String].self, bytes(intKeys.hex)) == [1: "one", -2: "minus two"])
    }

    // MARK: Swift → Python

    /// Runs check_vectors.py on `vectors`; returns its exit status and output.
    private func runPythonChecker(_ vectors: [Vector]) throws -> (status: Int32, output: String) {
        let probe = try run(["-c", "import msgpack"])
        try #require(probe.status == 0,
                     "python3 cannot import msgpack (run `make deps` or `python3 -m pip install msgpack`): \(probe.output)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("swift-vectors-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONEncoder().encode(VectorFile(generator: "swift", vectors: vectors)).write(to: file)
        let script = try Self.fixtures.appendingPathComponent("check_vectors.py").path
        return try run([script, file.path])
    }

    /// Runs python3 with `arguments`, killing it after 30 seconds.
    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            Issue.record("python3 \(arguments.first ?? "") timed out")
        }
        process.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, output)
    }

    private func vector<T: Encodable>(_ name: String, _ value: T, expecting expected: MessagePackValue) throws -> Vector {
        Vector(name: name, hex: hex(try encoded(value)), value: TypedValue(expected))
    }

    @Test func pythonDecodesSwiftEncodedValues() throws {
        let snapshot = Snapshot(version: 1, counter: -7, items: (0 ..< 3).map { Item(id: $0, name: "name-\($0)", done: $0 == 1) })
        let vectors = [
            try vector("bool", true, expecting: .bool(true)),
            try vector("int8 min", Int8.min, expecting: .int(-128)),
            try vector("int64 min", Int64.min, expecting: .int(.min)),
            try vector("uint64 max", UInt64.max, expecting: .uint(.max)),
            try vector("float", Float(2.5), expecting: .float(2.5)),
            try vector("double nan", Double.nan, expecting: .double(.nan)),
            try vector("string", "grüß 🙂", expecting: .string("grüß 🙂")),
            try vector("bytes", [UInt8](repeating: 1, count: 300), expecting: .binary([UInt8](repeating: 1, count: 300))),
            try vector("data", Data([1, 2]), expecting: .binary([1, 2])),
            try vector("date", Date(timeIntervalSince1970: -1.25), expecting: .timestamp(seconds: -2, nanoseconds: 750_000_000)),
            try vector("optional", [Int?.none, 3], expecting: .array([.nil, .uint(3)])),
            try vector("int keys", [2: "b", -1: "a"], expecting: .map([(.int(-1), .string("a")), (.uint(2), .string("b"))])),
            try vector("enum", Action.add(amount: 2), expecting: .map([(.string("add"), .map([(.string("amount"), .uint(2))]))])),
            try vector("snapshot", snapshot, expecting: .map([
                (.string("version"), .uint(1)), (.string("counter"), .int(-7)),
                (.string("items"), .array(snapshot.items.map {
                    .map([(.string("id"), .uint(UInt64($0.id))), (.string("name"), .string($0.name)), (.string("done"), .bool($0.done))])
                })),
            ])),
        ]
        let result = try runPythonChecker(vectors)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("checked \(vectors.count) vectors, 0 failed"))
    }

    @Test func pythonCheckerDetectsMismatches() throws {
        let result = try runPythonChecker([try vector("wrong on purpose", 1, expecting: .uint(2))])
        #expect(result.status == 1)
        #expect(result.output.contains("wrong on purpose"))
    }
}
