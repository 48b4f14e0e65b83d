import Foundation
import Glibc
@testable import ReactorStorage
import Testing

/// Namespace for the durability layer's suites, so `swift test --filter Persistence` runs them all.
enum PersistenceTests {}

/// A fresh directory under /tmp, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/reactorbus-persistence-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw PersistenceError.io(operation: "mkdtemp", path: "/tmp", errno: errno)
        }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var journal: String { path + "/journal" }
    var snapshots: String { path + "/snapshots" }

    func segment(_ firstLSN: UInt64) -> String {
        journal + "/" + JournalSegment.fileName(firstLSN: firstLSN)
    }
}

/// File surgery and fixtures shared by the persistence suites.
enum Disk {
    static let app = "test-app"
    /// Segment header size for `app`: 8 magic + 4 version + 2 length + 8 name.
    static let segmentHeader = 22

    /// A deterministic payload of `length` bytes for record `i`.
    static func payload(_ i: Int, length: Int = 20) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: i &* 31 &+ $0 &* 7) }
    }

    static func read(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func size(_ path: String) throws -> Int {
        try read(path).count
    }

    static func truncate(_ path: String, to length: Int) throws {
        #expect(Glibc.truncate(path, off_t(length)) == 0)
    }

    static func flip(_ path: String, at offset: Int) throws {
        var bytes = try read(path)
        bytes[offset] ^= 0xFF
        try write(bytes, to: path)
    }

    static func list(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    /// Every file's name and content under `directory`, recursively, for "untouched" checks.
    static func contents(of directory: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let name = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = directory + "/" + name
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                result[name] = try read(path)
            }
        }
        return result
    }

    /// Appends records `range` (payloads from ``payload(_:length:)``), committing every `batch`.
    static func fill(_ journal: Journal, _ range: ClosedRange<Int>, batch: Int = 1, length: Int = 20) throws {
        for i in range {
            let lsn = try journal.append(payload(i, length: length))
            #expect(lsn == UInt64(i))
            if i % batch == 0 { try journal.commit() }
        }
        try journal.commit()
    }

    static func expected(_ range: ClosedRange<Int>, length: Int = 20) -> [JournalRecord] {
        range.map { JournalRecord(lsn: UInt64($0), payload: payload($0, length: length)) }
    }
}
