import Testing
@testable import MessagePack

/// Records the encoders handed to `encode(to:)` without keeping them alive.
///
/// `@unchecked Sendable` only so it can travel in `userInfo`: each probe is made,
/// filled by a synchronous `encode` and read by one test on one thread.
private final class EncoderProbe: @unchecked Sendable {
    private struct WeakBox { weak var object: AnyObject? }
    private var boxes: [WeakBox] = []

    func record(_ encoder: any Encoder) { boxes.append(WeakBox(object: encoder as AnyObject)) }

    var recorded: Int { boxes.count }
    var alive: Int { boxes.filter { $0.object != nil }.count }

    static let key = CodingUserInfoKey(rawValue: "encoderProbe")!
}

/// A nested value whose encoding throws after its container was opened.
private struct Failing: Encodable {
    struct Boom: Error {}
    enum CodingKeys: String, CodingKey { case inner }
    func encode(to encoder: any Encoder) throws {
        (encoder.userInfo[EncoderProbe.key] as? EncoderProbe)?.record(encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        _ = container.nestedUnkeyedContainer(forKey: .inner)
        throw Boom()
    }
}

/// The encoder's node tree is freed even when `encode(to:)` throws half-way (the
/// leak itself is pinned down in `FuzzRegressionTests`).
struct EncoderLifetimeTests {
    @Test func encodersAreFreedWhenEncodingThrows() {
        let probe = EncoderProbe()
        let encoder = MessagePackEncoder(userInfo: [EncoderProbe.key: probe])
        #expect(throws: Failing.Boom.self) { try encoder.encode(["a": Failing()]) }
        #expect(probe.recorded == 1)
        #expect(probe.alive == 0)
    }
}
