import CZMQ

/// CURVE key handling and Z85 text encoding, as provided by libzmq.
///
/// Keys are 32 bytes; in text form they are 40 Z85 characters. All members are pure functions,
/// safe from any thread. Check ``ZMQ/hasCapability(_:)`` with `"curve"` before relying on CURVE.
package enum ZMQCurve {
    /// A CURVE key pair in Z85 text form (40 characters each).
    package struct KeyPair: Sendable, Hashable {
        /// The public key, shared with peers.
        package let publicKey: String
        /// The secret key, kept by its owner.
        package let secretKey: String

        /// Creates a key pair from existing Z85 keys.
        package init(publicKey: String, secretKey: String) {
            self.publicKey = publicKey
            self.secretKey = secretKey
        }
    }

    /// Generates a fresh key pair (`zmq_curve_keypair`).
    ///
    /// - Throws: ``ZMQError`` with `ENOTSUP` when libzmq was built without CURVE.
    package static func generateKeyPair() throws(ZMQError) -> KeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        try zmqCall("zmq_curve_keypair") { zmq_curve_keypair(&publicKey, &secretKey) }
        return KeyPair(publicKey: text(publicKey), secretKey: text(secretKey))
    }

    /// Derives the Z85 public key belonging to a Z85 secret key (`zmq_curve_public`).
    ///
    /// - Throws: ``ZMQError`` with `EINVAL` unless `secretKey` is 40 Z85 characters,
    ///   `ENOTSUP` when libzmq was built without CURVE.
    package static func publicKey(fromSecret secretKey: String) throws(ZMQError) -> String {
        guard secretKey.utf8.count == 40 else { throw ZMQError(code: EINVAL, function: "zmq_curve_public") }
        var publicKey = [CChar](repeating: 0, count: 41)
        try zmqCall("zmq_curve_public") { zmq_curve_public(&publicKey, secretKey) }
        return text(publicKey)
    }

    /// Encodes bytes as Z85 text (`zmq_z85_encode`); 4 bytes become 5 characters.
    ///
    /// - Throws: ``ZMQError`` with `EINVAL` unless the byte count is a multiple of 4.
    package static func z85Encode(_ bytes: [UInt8]) throws(ZMQError) -> String {
        guard bytes.count % 4 == 0 else { throw ZMQError(code: EINVAL, function: "zmq_z85_encode") }
        var output = [CChar](repeating: 0, count: bytes.count / 4 * 5 + 1)
        guard zmq_z85_encode(&output, bytes, bytes.count) != nil else {
            throw ZMQError(code: EINVAL, function: "zmq_z85_encode")
        }
        return text(output)
    }

    /// Decodes Z85 text to bytes (`zmq_z85_decode`); 5 characters become 4 bytes.
    ///
    /// - Throws: ``ZMQError`` with `EINVAL` unless the length is a multiple of 5 and every
    ///   character belongs to the Z85 alphabet.
    package static func z85Decode(_ text: String) throws(ZMQError) -> [UInt8] {
        let length = text.utf8.count
        guard length % 5 == 0 else { throw ZMQError(code: EINVAL, function: "zmq_z85_decode") }
        var output = [UInt8](repeating: 0, count: length / 5 * 4)
        guard zmq_z85_decode(&output, text) != nil else {
            throw ZMQError(code: EINVAL, function: "zmq_z85_decode")
        }
        return output
    }

    /// The text before the first NUL of a C character buffer.
    private static func text(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
