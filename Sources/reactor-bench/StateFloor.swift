import CMsgPack
import Foundation
import Glibc
import MessagePack
import ReactorApps
import ReactorBus
import TestSupport
import ZeroMQ

/// The state phase's floor: the cost of turning a state's MessagePack bytes into the app's
/// typed state at all, with no framework and no `Codable`. msgpack-c unpacks the bytes
/// (`msgpack_unpack_next`, strings by reference into them), and the `catalog` state is built
/// from its objects directly: one `String` per entry, inserted into a dictionary reserved for
/// all of them. A late joiner can be no faster than moving the bytes (``RawChunkBaseline``) and
/// then this, so their sum shows how much of its wait is the framework's and how much is the
/// price of a million Swift values.
///
/// Each figure is timed in a fresh process (`reactor-bench peer state-decode`), as a late
/// joiner's decoding is: in the bench's own process a build after the last one's million
/// strings were freed took a third longer, glibc's malloc going through the freed chunks.
/// The same peer times the package's `Codable` decoding of the bytes, and its encoding of the
/// state it decoded (what the authority does for a fetch), for comparison in the same run.
enum StateFloor {
    /// Medians over the runs, in seconds.
    struct Figures: Sendable {
        /// msgpack-c unpack + dictionary build, no Codable.
        var build: Double
        /// `MessagePackDecoder` into `Catalog.State`.
        var codableDecode: Double
        /// `MessagePackEncoder` of that state.
        var codableEncode: Double
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Times both ways of decoding `bytes` (and the Codable encoding) in `runs` fresh processes
    /// each, alternated; throws unless every decoded state has `expected`'s entries and digest.
    static func measure(bytes: [UInt8], expected: Catalog.State, runs: Int = 3) async throws -> Figures {
        let file = BenchPaths.temporaryFile("state-floor.msgpack")
        guard FileManager.default.createFile(atPath: file, contents: Data(bytes)) else { throw BenchError.phase("cannot write \(file)") }
        defer { try? FileManager.default.removeItem(atPath: file) }
        var builds: [Double] = []
        var decodes: [Double] = []
        var encodes: [Double] = []
        for _ in 0 ..< max(1, runs) {
            for mode in ["floor", "codable"] {
                let peer = try ChildProcess.peer(["state-decode", "--file", file, "--mode", mode], name: "state-decode-\(mode)")
                let result = try await BaselinePhase.withChildren([peer]) {
                    guard let result = await peer.waitForEvent("result", timeout: .seconds(120)) else {
                        throw BenchError.phase("state-decode \(mode): no result\n\(peer.logTail())")
                    }
                    return result
                }
                guard result["entries"]?.intValue == Int64(expected.entries.count), result["digest"]?.stringValue == String(expected.benchDigest, radix: 16),
                      let seconds = result["seconds"]?.doubleValue else {
                    throw BenchError.phase("state-decode \(mode): the state differs from the expected one: \(result.rendered)")
                }
                if mode == "floor" {
                    builds.append(seconds)
                } else {
                    decodes.append(seconds)
                    encodes.append(result["encode_seconds"]?.doubleValue ?? .nan)
                }
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return Figures(build: median(builds), codableDecode: median(decodes), codableEncode: median(encodes))
    }

    /// The peer: reads `file`, decodes it once the `mode` way (`floor` or `codable`), and prints
    /// the seconds, the state's entry count and digest (`codable` also times encoding it again).
    static func decodePeer(file: String, mode: String) -> Int32 {
        do {
            guard let data = FileManager.default.contents(atPath: file) else { throw Failure(description: "cannot read \(file)") }
            let bytes = [UInt8](data)
            let started = MonotonicClock.nanoseconds()
            let state = mode == "floor" ? try build(bytes) : try MessagePackDecoder().decode(Catalog.State.self, from: bytes)
            let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
            var members: [(String, MessagePackValue)] = [("event", "result"), ("mode", .string(mode)), ("seconds", .number(seconds, places: 4))]
            if mode == "codable" {
                let encodeStarted = MonotonicClock.nanoseconds()
                let encoded = try MessagePackEncoder(sortKeys: false).encode(state)
                members.append(("encode_seconds", .number(Double(MonotonicClock.nanoseconds() - encodeStarted) / 1e9, places: 4)))
                members.append(("encoded_bytes", .whole(encoded.count)))
            }
            members += [("entries", .whole(state.entries.count)), ("digest", .string(String(state.benchDigest, radix: 16)))]
            Output.line(MessagePackValue.object(members).rendered)
            return 0
        } catch {
            Output.line(MessagePackValue.object([("event", "failed"), ("error", .string(String(describing: error)))]).rendered)
            return 1
        }
    }

    /// `{"fills": Int, "entries": {Int: String}}` straight from msgpack-c's objects.
    static func build(_ bytes: [UInt8]) throws -> Catalog.State {
        var unpacked = msgpack_unpacked()
        msgpack_unpacked_init(&unpacked)
        defer { msgpack_unpacked_destroy(&unpacked) }
        var offset = 0
        let status = bytes.withUnsafeBytes {
            msgpack_unpack_next(&unpacked, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count, &offset)
        }
        guard status == MSGPACK_UNPACK_SUCCESS, unpacked.data.type == MSGPACK_OBJECT_MAP else {
            throw Failure(description: "msgpack-c could not unpack the state (status \(status.rawValue))")
        }
        var state = Catalog.State()
        let root = unpacked.data.via.map
        for field in UnsafeBufferPointer(start: root.ptr, count: Int(root.size)) {
            if isKey(field.key, "fills") {
                state.fills = try int(field.val)
            } else if isKey(field.key, "entries") {
                guard field.val.type == MSGPACK_OBJECT_MAP else { throw Failure(description: "entries is not a map") }
                let map = field.val.via.map
                var entries: [Int: String] = [:]
                entries.reserveCapacity(Int(map.size))
                for entry in UnsafeBufferPointer(start: map.ptr, count: Int(map.size)) {
                    guard entry.val.type == MSGPACK_OBJECT_STR else { throw Failure(description: "an entry is not a string") }
                    let text = entry.val.via.str
                    entries[try int(entry.key)] = String(decoding: UnsafeRawBufferPointer(start: text.ptr, count: Int(text.size)), as: UTF8.self)
                }
                state.entries = entries
            }
        }
        return state
    }

    private static func isKey(_ object: msgpack_object, _ key: StaticString) -> Bool {
        guard object.type == MSGPACK_OBJECT_STR, Int(object.via.str.size) == key.utf8CodeUnitCount, let name = object.via.str.ptr else { return false }
        return memcmp(name, key.utf8Start, key.utf8CodeUnitCount) == 0
    }

    private static func int(_ object: msgpack_object) throws -> Int {
        switch object.type {
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            guard let value = Int(exactly: object.via.u64) else { break }
            return value
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            return Int(object.via.i64)
        default:
            break
        }
        throw Failure(description: "expected an integer")
    }
}
