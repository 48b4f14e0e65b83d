import Foundation
import ZeroMQ

/// CURVE keys on disk: one 40-character Z85 key per file, as `reactor-node keygen` writes them
/// (`NAME.key` holds the secret key, mode 0600; `NAME.pub` the public key).
public enum CurveKeyFile {
    /// Why a key file cannot be used.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "key file \(path): \(reason)" }
    }

    /// Reads a key file and checks that it holds one Z85 CURVE key.
    public static func read(_ path: String) throws(Problem) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem(path: path, reason: "cannot be read (does it exist?)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count == 40, (try? ZMQCurve.z85Decode(text))?.count == 32 else {
            throw Problem(path: path, reason: "does not hold a 40-character Z85 CURVE key")
        }
        return text
    }

    /// Writes a key pair as `PREFIX.key` (secret, owner-only) and `PREFIX.pub`.
    /// - Returns: the two paths.
    package static func write(_ pair: ZMQCurve.KeyPair, prefix: String) throws -> (secret: String, public: String) {
        let secretPath = prefix + ".key"
        let publicPath = prefix + ".pub"
        guard FileManager.default.createFile(atPath: secretPath, contents: Data((pair.secretKey + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw Problem(path: secretPath, reason: "cannot be written")
        }
        guard FileManager.default.createFile(atPath: publicPath, contents: Data((pair.publicKey + "\n").utf8), attributes: [.posixPermissions: 0o644]) else {
            throw Problem(path: publicPath, reason: "cannot be written")
        }
        return (secretPath, publicPath)
    }
}
