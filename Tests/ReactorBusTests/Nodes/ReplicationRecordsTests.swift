import MessagePack
@testable import ReactorBus
import Testing

/// A `records` body carries the payloads byte for byte, in order, whatever their number and
/// size, and anything but an array of `bin` values reads as no body at all.
@Suite struct ReplicationRecordsTests {
    func packed(_ payloads: [[UInt8]]) -> [UInt8] {
        let writer = MessagePackWriter()
        ReplicationRecords.pack(payloads, into: writer)
        return writer.bytes
    }

    @Test func payloadsComeBackExactlyInOrder() {
        let large = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let cases: [[[UInt8]]] = [[], [[]], [[0x81, 0xA1, 0x61, 0x01]], [[1], [], [2, 3], large, [0xC1]],
                                  (0..<512).map { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }]
        for payloads in cases {
            #expect(ReplicationRecords.unpack(packed(payloads)) == payloads)
        }
    }

    @Test func theBodyIsAnArrayOfBinValues() {
        // fixarray of 2, then bin8 of length 1 and bin8 of length 0.
        #expect(packed([[7], []]) == [0x92, 0xC4, 0x01, 0x07, 0xC4, 0x00])
    }

    @Test func packingAfterAClearStartsAFrameOfItsOwn() {
        let writer = MessagePackWriter()
        ReplicationRecords.pack([[1, 2, 3]], into: writer)
        writer.reset()
        ReplicationRecords.pack([[4]], into: writer)
        #expect(ReplicationRecords.unpack(writer.bytes) == [[4]])
    }

    @Test func anythingButAnArrayOfBinIsNoBody() {
        let string = MessagePackWriter()
        string.packArrayHeader(2)
        string.packBinary([1])
        string.packString("x")
        let map = MessagePackWriter()
        map.packMapHeader(0)
        let whole = packed([[1, 2], [3]])
        let bodies: [[UInt8]] = [[], [0xC1], string.bytes, map.bytes, [0x01], Array(whole.dropLast()), whole + [0x90]]
        for body in bodies {
            #expect(ReplicationRecords.unpack(body) == nil, "\(body)")
        }
    }
}
