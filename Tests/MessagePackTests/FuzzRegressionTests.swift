import Foundation
import Testing
@testable import MessagePack

/// Inputs that fuzz-msgpack (Fuzz/, docs/FUZZING.md) found to break a check, fed again exactly
/// as found. Each reproducer is also in the seed corpus as `Fuzz/corpus/msgpack/regression-*`, so
/// every fuzz run replays it too.
@Suite struct FuzzRegressionTests {
    /// LeakSanitizer under fuzz-msgpack, on `81 a5 "point" 82 a1 "x" 01 a1 "y" 02` decoded as an
    /// enum with associated values and encoded again: every nested container's node kept its
    /// parent alive (`parent` strong, the parent holding the child in `deferred`), so each encode
    /// of a value with a nested container leaked the whole node tree and its buffers.
    @Test func encoderNodesAreFreedAfterEncoding() throws {
        let input = bytes("81 a5 706f696e74 82 a1 78 01 a1 79 02")
        let shape = try decoded(LeakProbe.self, input)
        #expect(shape == .point(x: 1, y: 2))
        let probe = EncoderProbe()
        _ = try MessagePackEncoder().encode(probe)
        #expect(probe.encoders.count == 3)
        #expect(probe.encoders.allSatisfy { $0.object == nil }, "encoder nodes outlived the encode call")
    }
}

/// The enum shape the fuzzer's input decodes as.
private enum LeakProbe: Codable, Equatable {
    case point(x: Int, y: Int)
}

/// Remembers, weakly, the encoder of the value and of a nested container and a super-encoder
/// (both deferred children of the value's node).
private final class EncoderProbe: Encodable, @unchecked Sendable {
    struct Weak { weak var object: AnyObject? }
    var encoders: [Weak] = []

    enum Keys: String, CodingKey { case nested, base }

    func encode(to encoder: any Encoder) throws {
        encoders.append(Weak(object: encoder as AnyObject))
        var container = encoder.container(keyedBy: Keys.self)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .nested)
        try nested.encode(1, forKey: .base)
        let base = container.superEncoder(forKey: .base)
        encoders.append(Weak(object: base as AnyObject))
        var single = base.singleValueContainer()
        try single.encode("base")
        let superEncoder = container.superEncoder()
        encoders.append(Weak(object: superEncoder as AnyObject))
        try "super".encode(to: superEncoder)
    }
}
