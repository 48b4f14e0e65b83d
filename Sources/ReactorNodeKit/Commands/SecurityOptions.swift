import ArgumentParsing
import ReactorBus

/// The CURVE options of the authority and of its peers.
enum SecurityOptions {
    static let authority: [Option] = [
        .value("curve-secret-key", "FILE", help: "turn CURVE on with this secret key (from the keygen command)"),
        .value("allow-keys", "DIR", help: "admit only public keys in DIR/actions, DIR/workers, DIR/feed (*.pub)"),
    ]

    static let peer: [Option] = [
        .value("curve-server-key", "FILE", help: "the authority's public key file; turns CURVE on"),
        .value("curve-secret-key", "FILE", help: "this peer's secret key file (needed with --curve-server-key)"),
    ]

    static func authority(_ arguments: ParsedArguments) throws -> AuthoritySecurity? {
        guard let secretFile = arguments.string("curve-secret-key") else {
            if arguments.string("allow-keys") != nil { throw CLIError.usage("\(arguments.command): --allow-keys needs --curve-secret-key") }
            return nil
        }
        do {
            return try AuthoritySecurity(secretKey: try CurveKeyFile.read(secretFile), allowKeysDirectory: arguments.string("allow-keys"))
        } catch {
            throw CLIError.usage("\(arguments.command): \(error)")
        }
    }

    static func peer(_ arguments: ParsedArguments) throws -> ClientSecurity? {
        let server = arguments.string("curve-server-key")
        let secret = arguments.string("curve-secret-key")
        guard let server else {
            if secret != nil { throw CLIError.usage("\(arguments.command): --curve-secret-key needs --curve-server-key") }
            return nil
        }
        guard let secret else { throw CLIError.usage("\(arguments.command): --curve-server-key needs --curve-secret-key (make one with the keygen command)") }
        do {
            return try ClientSecurity(serverKey: try CurveKeyFile.read(server), secretKey: try CurveKeyFile.read(secret))
        } catch {
            throw CLIError.usage("\(arguments.command): \(error)")
        }
    }
}
