import Foundation
import Testing
@testable import MessagePack

/// Bytes from a hex string such as "cd 01 00" (spaces ignored).
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0 ... $0 + 1]), radix: 16) ?? 0 }
}

/// Lower-case hex without separators.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

func encoded<T: Encodable>(_ value: T, sortKeys: Bool = true) throws -> [UInt8] {
    try MessagePackEncoder(sortKeys: sortKeys).encode(value)
}

func decoded<T: Decodable>(_ type: T.Type, _ input: [UInt8]) throws -> T {
    try MessagePackDecoder().decode(type, from: input)
}

/// Encodes and decodes `value`, returning the bytes and the decoded copy.
func roundTrip<T: Codable>(_ value: T) throws -> (bytes: [UInt8], value: T) {
    let data = try encoded(value)
    return (data, try decoded(T.self, data))
}

/// The `DecodingError` thrown by `body`, or `nil` (recorded as an issue) if none or another error.
func decodingError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> DecodingError? {
    do {
        try body()
        Issue.record("expected a DecodingError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as DecodingError {
        return error
    } catch {
        Issue.record("expected a DecodingError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

extension DecodingError {
    enum Kind: Equatable { case typeMismatch, valueNotFound, keyNotFound, dataCorrupted }

    var kind: Kind {
        switch self {
        case .typeMismatch: return .typeMismatch
        case .valueNotFound: return .valueNotFound
        case .keyNotFound: return .keyNotFound
        case .dataCorrupted: return .dataCorrupted
        @unknown default: return .dataCorrupted
        }
    }

    var context: Context? {
        switch self {
        case .typeMismatch(_, let context), .valueNotFound(_, let context),
             .keyNotFound(_, let context), .dataCorrupted(let context):
            return context
        @unknown default:
            return nil
        }
    }

    /// The coding path as strings (int keys as "[n]").
    var path: [String] {
        (context?.codingPath ?? []).map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
    }

    var message: String { context?.debugDescription ?? "" }
}

/// A `userInfo` key whose presence gives an encode call a session of its own instead of its
/// thread's kept one (the coders never keep a session that carries `userInfo`).
let freshSession = CodingUserInfoKey(rawValue: "fresh session")!

/// Runs `body` on a new thread and returns once that thread has exited (its thread-local
/// objects released).
func runOnNewThread(_ body: @escaping () -> Void) {
    final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Body(body)).toOpaque()
    let created = pthread_create(&thread, nil, { context in
        if let context { Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run() }
        return nil
    }, context)
    guard created == 0 else {
        Unmanaged<Body>.fromOpaque(context).release()
        Issue.record("pthread_create failed: \(created)")
        return
    }
    pthread_join(thread, nil)
}

/// The boxes of the keyed containers values were given in coding calls, in order: whether each
/// value got the same box as the value before it, and whether the boxes outlived the calls.
///
/// `@unchecked Sendable` only because it reaches `encode(to:)` and `init(from:)` through
/// `userInfo` or a task-local value, which take `Sendable` values; it (and a test's subclass)
/// holds boxes and stashed containers, which are not, so a mutex cannot hold them either. Safe
/// because one thread alone touches it at a time: each test makes its own log, passes it to
/// coding calls that run every `encode(to:)` and `init(from:)` synchronously on the calling
/// thread (or on a thread the test joins, with ``runOnNewThread(_:)``, before reading), and reads
/// it after those calls returned; no log is shared between tests.
class KeptBoxLog: @unchecked Sendable {
    private struct Weak { weak var box: KeptBox? }

    /// Each box's identity, in order. A box made anew for each value could reuse a freed one's
    /// address, so identities are compared only where both boxes are known to be alive.
    private(set) var boxes: [ObjectIdentifier] = []
    /// For each box after the first: whether it is the one before it (compared with that one
    /// only while it is alive).
    private(set) var sameAsPrevious: [Bool] = []
    private var held: [Weak] = []

    /// Whether every box noted has been freed.
    var allFreed: Bool { held.allSatisfy { $0.box == nil } }

    /// Notes the box of `container`, which a value was just given.
    func note<Container>(_ container: Container) {
        let box = KeyedContainerLayout.box(of: container)
        if let previous = held.last { sameAsPrevious.append(previous.box === box) }
        boxes.append(ObjectIdentifier(box))
        held.append(Weak(box: box))
    }
}
