import Testing
@testable import MessagePack

/// Encoders must not outlive their `encode` call: a leaked encoder keeps its buffers, and a
/// process that encodes a mutation per message grows without bound.
@Suite struct EncoderLifetimeTests {
    /// Remembers, weakly, the encoder a value was encoded with.
    /// Used by one test at a time, on one task.
    final class Probe {
        private weak var encoder: AnyObject?

        func remember(_ encoder: any Encoder) { self.encoder = encoder as AnyObject }
        var isAlive: Bool { encoder != nil }
    }

    /// A value whose encoding nests containers, as every enum case with a payload does.
    struct Nested: Encodable {
        enum Keys: String, CodingKey { case outer, inner, list, value }
        let probe: Probe
        let fails: Bool

        func encode(to encoder: any Encoder) throws {
            probe.remember(encoder)
            var container = encoder.container(keyedBy: Keys.self)
            var outer = container.nestedContainer(keyedBy: Keys.self, forKey: .outer)
            var inner = outer.nestedContainer(keyedBy: Keys.self, forKey: .inner)
            try inner.encode(42, forKey: .value)
            var list = outer.nestedUnkeyedContainer(forKey: .list)
            try list.encode("x")
            if fails { throw EncodingError.invalidValue(42, .init(codingPath: [], debugDescription: "refused")) }
        }
    }

    @Test func anEncoderWithNestedContainersIsFreedAfterEncoding() throws {
        let probe = Probe()
        let bytes = try MessagePackEncoder().encode(Nested(probe: probe, fails: false))
        #expect(!bytes.isEmpty)
        #expect(!probe.isAlive)
    }

    @Test func anEncoderIsFreedWhenEncodingFails() {
        let probe = Probe()
        #expect(throws: EncodingError.self) { try MessagePackEncoder().encode(Nested(probe: probe, fails: true)) }
        #expect(!probe.isAlive)
    }

    @Test func enumCasesStillEncodeAsBefore() throws {
        // {"add": {"amount": 5}}
        #expect(try MessagePackEncoder().encode(Action.add(amount: 5)) == [0x81, 0xa3] + Array("add".utf8) + [0x81, 0xa6] + Array("amount".utf8) + [0x05])
    }
}
