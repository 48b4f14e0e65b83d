/// The routing id a ROUTER socket gives a connected peer: who sent a message, whom to answer.
package struct PeerID: Hashable, Sendable, CustomStringConvertible {
    /// The routing id bytes as ZeroMQ delivers them.
    package var bytes: [UInt8]

    /// Wraps routing id bytes.
    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }

    /// The hash dictionaries use: a routing id libzmq makes (5 bytes) is packed with its length
    /// into one word and hashed in one pass, as an `Int` key is; a longer one (a socket's own
    /// identity) is hashed as its bytes. The authority finds the sending worker by this for
    /// every message.
    package func _rawHashValue(seed: Int) -> Int {
        guard bytes.count < 8 else { return bytes._rawHashValue(seed: seed) }
        var word = UInt64(bytes.count) << 56
        for (index, byte) in bytes.enumerated() { word |= UInt64(byte) << (8 * UInt64(index)) }
        return word._rawHashValue(seed: seed)
    }

    /// Hex, for logs.
    package var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
