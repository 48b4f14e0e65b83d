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
        /// Whether both remember the same live encoder.
        func isSame(as other: Probe) -> Bool { encoder != nil && encoder === other.encoder }
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

    // A call with `userInfo` has a session of its own, freed with everything in it at the end
    // of the call; a call without one takes its thread's kept session (the tests below).

    @Test func anEncoderWithNestedContainersIsFreedAfterEncoding() throws {
        let probe = Probe()
        let bytes = try MessagePackEncoder(userInfo: [freshSession: true]).encode(Nested(probe: probe, fails: false))
        #expect(!bytes.isEmpty)
        #expect(!probe.isAlive)
    }

    @Test func anEncoderIsFreedWhenEncodingFails() {
        let probe = Probe()
        #expect(throws: EncodingError.self) { try MessagePackEncoder(userInfo: [freshSession: true]).encode(Nested(probe: probe, fails: true)) }
        #expect(!probe.isAlive)
    }

    @Test func aThreadsKeptSessionReusesItsEncoderForTheNextCall() throws {
        let first = Probe()
        let bytes = try MessagePackEncoder().encode(Nested(probe: first, fails: false))
        let second = Probe()
        #expect(try MessagePackEncoder().encode(Nested(probe: second, fails: false)) == bytes)
        #expect(first.isAlive && first.isSame(as: second), "the second call made a new encoder")
        // After a failed call as well.
        let failed = Probe()
        #expect(throws: EncodingError.self) { try MessagePackEncoder().encode(Nested(probe: failed, fails: true)) }
        let after = Probe()
        #expect(try MessagePackEncoder().encode(Nested(probe: after, fails: false)) == bytes)
    }

    @Test func aThreadsKeptSessionIsFreedWhenTheThreadExits() throws {
        let probe = Probe()
        var bytes: [UInt8] = []
        var failure: (any Error)?
        runOnNewThread {
            do {
                bytes = try MessagePackEncoder().encode(Nested(probe: probe, fails: false))
                // Held by the thread's session until the thread exits.
                if !probe.isAlive { failure = EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "not kept")) }
            } catch {
                failure = error
            }
        }
        #expect(failure == nil)
        #expect(!bytes.isEmpty)
        #expect(!probe.isAlive, "the session of an exited thread kept its encoder")
    }

    /// An `encode(to:)` that encodes another value meanwhile gets a session of its own: both
    /// calls write what they would alone.
    struct Reentrant: Encodable {
        enum Keys: String, CodingKey { case inner, bytes }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            let inner = try MessagePackEncoder().encode(Action.add(amount: 5))
            try container.encode(Action.add(amount: 5), forKey: .inner)
            try container.encode(inner, forKey: .bytes)
        }
    }

    @Test func anEncodeInsideAnEncodeWritesItsOwnBytes() throws {
        let action = [0x81, 0xa3] + Array("add".utf8) + [0x81, 0xa6] + Array("amount".utf8) + [0x05]
        let expected = [0x82, 0xa5] + Array("inner".utf8) + action + [0xa5] + Array("bytes".utf8) + [0xc4, UInt8(action.count)] + action
        #expect(try MessagePackEncoder().encode(Reentrant()) == expected)
        #expect(try MessagePackEncoder().encode([Reentrant(), Reentrant()]) == [0x92] + expected + expected)
    }

    @Test func enumCasesStillEncodeAsBefore() throws {
        // {"add": {"amount": 5}}
        #expect(try MessagePackEncoder().encode(Action.add(amount: 5)) == [0x81, 0xa3] + Array("add".utf8) + [0x81, 0xa6] + Array("amount".utf8) + [0x05])
    }
}
