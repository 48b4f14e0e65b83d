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
