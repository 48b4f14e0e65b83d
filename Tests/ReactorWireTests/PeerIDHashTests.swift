import Testing
@testable import ReactorWire

/// A routing id's hash: short ids (libzmq's own, 5 bytes) in one word with their length,
/// longer ones by their bytes; either way every id is its own key.
@Suite struct PeerIDHashTests {
    @Test func routingIdsThatDifferInOneByteOrInLengthAreDifferentKeys() {
        let ids: [[UInt8]] = [[], [0], [0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 1, 0], [1, 0, 0, 0, 0],
                              [0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0], Array("worker-a".utf8), Array("worker-b".utf8)]
        var table: [PeerID: Int] = [:]
        for (index, bytes) in ids.enumerated() { table[PeerID(bytes)] = index }
        #expect(table.count == ids.count)
        for (index, bytes) in ids.enumerated() { #expect(table[PeerID(bytes)] == index) }
        #expect(table[PeerID([0, 0, 0, 0, 2])] == nil)
    }

    @Test func manyRoutingIdsOfEveryLengthStayApart() {
        var table: [PeerID: UInt32] = [:]
        for value in UInt32(0)..<2_000 {
            let bytes = [0] + withUnsafeBytes(of: value.bigEndian) { Array($0) }
            table[PeerID(bytes)] = value
            table[PeerID(bytes + [7, 7, 7, 7])] = value + 10_000
        }
        #expect(table.count == 4_000)
        #expect(table[PeerID([0, 0, 0, 0x03, 0xE7])] == 999)
        #expect(table[PeerID([0, 0, 0, 0x03, 0xE7, 7, 7, 7, 7])] == 10_999)
    }

    @Test func equalIdsHashAlike() {
        let short = PeerID([0, 0x80, 0, 0x41, 0xA7])
        #expect(short._rawHashValue(seed: 3) == PeerID([0, 0x80, 0, 0x41, 0xA7])._rawHashValue(seed: 3))
        let long = PeerID(Array("an-identity-set-by-the-socket".utf8))
        #expect(long._rawHashValue(seed: 3) == PeerID(Array("an-identity-set-by-the-socket".utf8))._rawHashValue(seed: 3))
        #expect(short.hashValue == PeerID([0, 0x80, 0, 0x41, 0xA7]).hashValue)
    }
}
