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

/// A value that opens a nested container and a super-encoder: both become deferred children.
private struct Nesting: Encodable {
    enum CodingKeys: String, CodingKey { case inner, base }
    enum InnerKeys: String, CodingKey { case value }

    func encode(to encoder: any Encoder) throws {
        let probe = encoder.userInfo[EncoderProbe.key] as? EncoderProbe
        probe?.record(encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        try inner.encode(1, forKey: .value)
        let base = container.superEncoder(forKey: .base)
        probe?.record(base)
        var single = base.singleValueContainer()
        try single.encode("base")
    }
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

/// Regression: child encoder nodes held their parent strongly while the parent held
/// them in its deferred list, so every nested container leaked its whole tree.
struct EncoderLifetimeTests {
    @Test func nestedContainersAndSuperEncodersAreFreedAfterEncoding() throws {
        let probe = EncoderProbe()
        let encoder = MessagePackEncoder(userInfo: [EncoderProbe.key: probe])
        let bytes = try encoder.encode([Nesting(), Nesting()])
        #expect(bytes.isEmpty == false)
        #expect(probe.recorded == 4)
        #expect(probe.alive == 0)
    }

    @Test func encodersAreFreedWhenEncodingThrows() {
        let probe = EncoderProbe()
        let encoder = MessagePackEncoder(userInfo: [EncoderProbe.key: probe])
        #expect(throws: Failing.Boom.self) { try encoder.encode(["a": Failing()]) }
        #expect(probe.recorded == 1)
        #expect(probe.alive == 0)
    }
}
