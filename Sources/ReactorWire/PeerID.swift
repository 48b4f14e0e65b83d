/// The routing id a ROUTER socket gives a connected peer: who sent a message, whom to answer.
package struct PeerID: Hashable, Sendable, CustomStringConvertible {
    /// The routing id bytes as ZeroMQ delivers them.
    package var bytes: [UInt8]

    /// Wraps routing id bytes.
    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Hex, for logs.
    package var description: String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
