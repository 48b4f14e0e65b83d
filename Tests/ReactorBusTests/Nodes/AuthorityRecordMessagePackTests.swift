import MessagePack
@testable import ReactorBus
import ReactorCore
import Testing

/// Journal records packed with msgpack-c's calls are byte for byte what the `Codable` path
/// writes (journals of either build read the same), and read back to the same records; other
/// shapes fall back to `Codable` with its errors.
@Suite struct AuthorityRecordMessagePackTests {
    let encoder = MessagePackEncoder()
    let decoder = MessagePackDecoder()

    /// Every case, with values at the edges of each field's encoding.
    var records: [AuthorityRecord] {
        let bytes: [[UInt8]] = [[], [0xC1], Array(repeating: 7, count: 300), Array(repeating: 1, count: 70_000)]
        let numbers: [UInt64] = [0, 1, 127, 128, 255, 256, 65_535, 65_536, UInt64(UInt32.max), UInt64(UInt32.max) + 1, .max]
        let smallNumbers: [UInt32] = [0, 1, 127, 128, 65_536, .max]
        var all: [AuthorityRecord] = []
        for (index, number) in numbers.enumerated() {
            let payload = bytes[index % bytes.count]
            let small = smallNumbers[index % smallNumbers.count]
            let job = JobID(actionSeq: number, effectIndex: small)
            all.append(.accepted(client: index % 2 == 0 ? "" : "client-\(index)-é", clientSeq: number, action: payload))
            all.append(.emitted(job: job, emitIndex: small, mutation: payload))
            all.append(.completed(job: job, emitCount: small))
            all.append(.failed(job: job, failure: EffectFailure(message: "failed \(index)", attempts: Int(small % 1_000))))
            all.append(.schema(version: small))
            all.append(.subscriptionEvent(run: number, index: .max - number, action: payload))
        }
        all.append(.started)
        all.append(.accepted(client: String(repeating: "x", count: 40), clientSeq: 3, action: [1, 2, 3]))
        return all
    }

    @Test func packedRecordsAreTheCodableBytes() throws {
        let writer = MessagePackWriter()
        for record in records {
            writer.reset()
            record.pack(into: writer)
            #expect(writer.bytes == (try encoder.encode(record)), "\(record)")
        }
    }

    @Test func recordsReadBackAsTheyWereWritten() throws {
        let writer = MessagePackWriter()
        for record in records {
            writer.reset()
            record.pack(into: writer)
            #expect(try AuthorityRecord(journalBytes: writer.bytes, decoder: decoder) == record)
            #expect(try decoder.decode(AuthorityRecord.self, from: writer.bytes) == record)
        }
    }

    /// Shapes the fast reader does not take go through Codable: extra keys are ignored as
    /// Codable ignores them, keys in another order are found, and wrong types throw Codable's
    /// errors rather than passing as something else.
    @Test func otherShapesTakeTheCodablePath() throws {
        let reordered = MessagePackValue.map([
            (.string("accepted"), .map([(.string("action"), .binary([9])), (.string("clientSeq"), .uint(5)), (.string("client"), .string("c"))])),
        ])
        #expect(try AuthorityRecord(journalBytes: reordered.pack(), decoder: decoder) == .accepted(client: "c", clientSeq: 5, action: [9]))
        let extra = MessagePackValue.map([
            (.string("completed"), .map([(.string("job"), .map([(.string("actionSeq"), .uint(4)), (.string("effectIndex"), .uint(1))])),
                                        (.string("emitCount"), .uint(2)), (.string("note"), .string("ignored"))])),
        ])
        #expect(try AuthorityRecord(journalBytes: extra.pack(), decoder: decoder) == .completed(job: JobID(actionSeq: 4, effectIndex: 1), emitCount: 2))
        let negative = MessagePackValue.map([
            (.string("accepted"), .map([(.string("client"), .string("c")), (.string("clientSeq"), .int(-1)), (.string("action"), .binary([]))])),
        ])
        #expect(throws: DecodingError.self) { try AuthorityRecord(journalBytes: negative.pack(), decoder: self.decoder) }
        let tooLarge = MessagePackValue.map([
            (.string("completed"), .map([(.string("job"), .map([(.string("actionSeq"), .uint(4)), (.string("effectIndex"), .uint(1))])),
                                        (.string("emitCount"), .uint(UInt64(UInt32.max) + 1))])),
        ])
        #expect(throws: DecodingError.self) { try AuthorityRecord(journalBytes: tooLarge.pack(), decoder: self.decoder) }
        let unknown = MessagePackValue.map([(.string("renamed"), .map([]))])
        #expect(throws: DecodingError.self) { try AuthorityRecord(journalBytes: unknown.pack(), decoder: self.decoder) }
        #expect(throws: DecodingError.self) { try AuthorityRecord(journalBytes: [0xC1], decoder: self.decoder) }
        #expect(throws: DecodingError.self) { try AuthorityRecord(journalBytes: [], decoder: self.decoder) }
    }

    /// A record read with the previous record's client keeps its own client whatever that
    /// was: the same name (then the very `String` given), a prefix, an extension, a name of
    /// one other byte, inline and heap-sized names, or none.
    @Test func anAcceptedRecordKeepsItsOwnClientWhateverTheLastOneWas() throws {
        let names = ["", "a", "b", "ab", "client-1", "client-2", "client-10", String(repeating: "x", count: 15),
                     String(repeating: "x", count: 16), String(repeating: "x", count: 40), String(repeating: "x", count: 41), "é"]
        let writer = MessagePackWriter()
        for previous in names + [nil] as [String?] {
            for name in names {
                writer.reset()
                AuthorityRecord.accepted(client: name, clientSeq: 9, action: [1]).pack(into: writer)
                let read = try AuthorityRecord(journalBytes: writer.bytes, decoder: decoder, client: previous)
                #expect(read == .accepted(client: name, clientSeq: 9, action: [1]), "after \(previous ?? "nil")")
            }
        }
        // Records of other kinds read the same with or without a client at hand.
        for record in records {
            writer.reset()
            record.pack(into: writer)
            #expect(try AuthorityRecord(journalBytes: writer.bytes, decoder: decoder, client: "client-1") == record)
        }
    }
}
