import ArgumentParsing
import ReactorBus
import ZeroMQ

/// `reactor-node keygen`: writes a CURVE key pair.
enum KeygenCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "keygen",
            summary: "write a CURVE key pair (Z85 text): PREFIX.key (secret) and PREFIX.pub",
            options: [
                .value("out", "PREFIX", help: "where to write the pair", required: true),
                .flag("force", help: "overwrite existing files"),
            ],
            discussion: """
            The authority takes its secret key with --curve-secret-key and admits the public keys
            found in --allow-keys DIR/{actions,workers,feed}/*.pub. Clients, workers and observers
            take --curve-server-key (the authority's .pub) and --curve-secret-key (their own .key).
            """,
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        let prefix = try arguments.required("out")
        if !arguments.flag("force") {
            for path in [prefix + ".key", prefix + ".pub"] where FileManagerCheck.exists(path) {
                throw CLIError.usage("keygen: \(path) exists; pass --force to overwrite it")
            }
        }
        guard ZMQ.hasCapability("curve") else { throw CLIError.failed("keygen: this libzmq has no CURVE support") }
        let pair = try ZMQCurve.generateKeyPair()
        let paths = try CurveKeyFile.write(pair, prefix: prefix)
        Output.line(#"{"public":"\#(pair.publicKey)","public_file":"\#(paths.public)","secret_file":"\#(paths.secret)"}"#)
        return 0
    }
}
