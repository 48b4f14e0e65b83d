import ArgumentParsing
import Foundation
import MessagePack
import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Synchronization
import ZeroMQ

/// `reactor-node send`: sends actions typed as JSON and waits for every ack.
enum SendCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "send",
            summary: "send actions typed as JSON; exits 0 only when every action was acked",
            options: [
                node.apps.appOption,
                .value("actions", "EP[,EP...]", help: "the authority's actions endpoint; several, comma-separated: authorities that take over from one another, tried in order", default: "tcp://127.0.0.1:7001"),
                .value("election", "URLS", help: "read the authorities' endpoints from etcd (the elected primary first, then its standbys) instead of --actions"),
                .value("repeat", "N", help: "send the list of actions N times", default: "1"),
                .value("concurrency", "C", help: "actions in flight at once (unacked)", default: "64"),
                .value("timeout", "SECONDS", help: "per attempt over a live connection; an unacked action is resent (idempotently) \(OptionDefaults.client.retries) times", default: OptionDefaults.seconds(OptionDefaults.client.timeout)),
                .value("connect-timeout", "SECONDS", help: "give up (exit 69) when the authority cannot be reached for this long", default: OptionDefaults.seconds(OptionDefaults.client.connectTimeout)),
                .value("busy-timeout", "SECONDS", help: "how long one action may be refused 'busy' (resent after jittered backoff) before it fails; 0: fail at once", default: OptionDefaults.seconds(OptionDefaults.client.busyBackoff.giveUpAfter)),
                .value("client-id", "ID", help: "the idempotency identity (default: a random UUID)"),
                CommonOptions.logLevel,
            ] + SecurityOptions.peer,
            positionalName: "ACTION_JSON",
            discussion: """
            Example: \(node.name) send --app counter --repeat 5000 '{"countUp":{}}' '{"countUpAsync":{}}'
            Progress goes to stderr once a second; one JSON summary line goes to stdout.
            An authority that answers 'busy' slows send down (jittered backoff, same client_seq) instead
            of failing actions; unacknowledged actions are resent when a restarted authority is back.
            With several --actions endpoints, a lost authority (no connection for 1 s, or no pong) makes send
            move to the next one and resend its unacknowledged actions there with the same client_seq.
            Exits 69 when the authority cannot be reached within --connect-timeout.
            """,
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        guard !arguments.positionals.isEmpty else { throw CLIError.usage("send: give at least one ACTION_JSON, e.g. '{\"countUp\":{}}'") }
        var payloads: [[UInt8]] = []
        for text in arguments.positionals {
            do {
                payloads.append(try MessagePackValue(jsonText: text).pack())
            } catch {
                throw CLIError.usage("send: '\(text)' is not JSON: \(error)")
            }
        }
        let app = try node.apps.app(arguments)
        let elected = try ElectedEndpoints.lists(["actions"], arguments, app: app.name, replacing: ["actions"])
        var configuration = ActionClientConfiguration(
            actionsEndpoint: try Endpoint.validateList(try elected?[0] ?? arguments.required("actions"), flag: "actions"),
            timeout: try CommonOptions.seconds(arguments, "timeout") ?? OptionDefaults.client.timeout,
            window: try CommonOptions.int(arguments, "concurrency", in: 1...ActionClientConfiguration.maximumWindow)
        )
        configuration.connectTimeout = try CommonOptions.seconds(arguments, "connect-timeout") ?? OptionDefaults.client.connectTimeout
        configuration.busyBackoff.giveUpAfter = try busyTimeout(arguments)
        if let id = arguments.string("client-id") { configuration.clientID = id }
        configuration.security = try SecurityOptions.peer(arguments)
        // Nothing is sent before the authority said it serves this app.
        configuration.appName = app.name
        configuration.schema = app.schema
        let plan = Plan(payloads: payloads, repeats: try CommonOptions.int(arguments, "repeat", in: 1...100_000_000), concurrency: configuration.window)
        let logger = try CommonOptions.logger("send", arguments)
        return try await node.apps.visit(arguments, Runner(configuration: configuration, plan: plan, arguments: arguments.positionals, logger: logger, program: node.name))
    }

    /// `--busy-timeout`: like other durations, but zero is allowed (fail at the first `busy`).
    static func busyTimeout(_ arguments: ParsedArguments) throws(CLIError) -> Duration {
        guard let raw = arguments.string("busy-timeout") else { return OptionDefaults.client.busyBackoff.giveUpAfter }
        guard let value = Double(raw), value >= 0, value.isFinite, value <= 86_400 else {
            throw .usage("send: '--busy-timeout \(raw)' must be a number of seconds, 0 or more")
        }
        return .milliseconds(Int64(value * 1_000))
    }

    struct Plan: Sendable {
        var payloads: [[UInt8]]
        var repeats: Int
        var concurrency: Int
        var total: Int { payloads.count * repeats }
    }

    /// Counts shared by the sending tasks and the progress printer.
    final class Tally: Sendable {
        private let state = Mutex<(acked: Int, failed: Int, lastVersion: UInt64, firstError: String?)>((0, 0, 0, nil))
        private let unreachable = Mutex<ClientError?>(nil)

        func ack(_ version: UInt64) { state.withLock { $0.acked += 1; $0.lastVersion = max($0.lastVersion, version) } }
        func fail(_ error: String) { state.withLock { $0.failed += 1; if $0.firstError == nil { $0.firstError = error } } }
        /// Records a failure; an unreachable authority, or one that serves another app, also
        /// stops every lane (see ``gaveUp``).
        func fail(_ error: ClientError) {
            switch error {
            case .unreachable, .refused(.wrongApp, _): unreachable.withLock { $0 = $0 ?? error }
            default: break
            }
            fail(String(describing: error))
        }
        /// The error that made send give up: the authority could not be reached.
        var gaveUp: ClientError? { unreachable.withLock { $0 } }
        var current: (acked: Int, failed: Int, lastVersion: UInt64, firstError: String?) { state.withLock { $0 } }
    }

    struct Runner: AppVisitor {
        let configuration: ActionClientConfiguration
        let plan: Plan
        let arguments: [String]
        let logger: Logger
        let program: String

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32 where H.Effect == R.Effect, H.Mutation == R.Mutation {
            // Refuse what the app would refuse before anything is sent.
            for (payload, text) in zip(plan.payloads, arguments) {
                do {
                    _ = try MessagePackDecoder().decode(R.Action.self, from: payload)
                } catch {
                    throw CLIError.usage("send: '\(text)' is not an action of this app: \(AppValueError.describe(error, type: R.Action.self))")
                }
            }
            let context = try ZMQContext()
            let client = try ActionClient<R>(configuration: configuration, logger: logger, context: context)
            try client.start()
            let tally = Tally()
            let started = ContinuousClock.now
            let total = plan.total
            let progress = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    let now = tally.current
                    logger.info("progress: \(now.acked + now.failed)/\(total) answered, \(now.acked) acked, \(now.failed) failed, version \(now.lastVersion)")
                }
            }
            let plan = self.plan
            await withTaskGroup(of: Void.self) { group in
                for lane in 0..<min(plan.concurrency, total) {
                    group.addTask {
                        var index = lane
                        while index < total, tally.gaveUp == nil {
                            do throws(ClientError) {
                                let ack = try await client.send(encoded: plan.payloads[index % plan.payloads.count])
                                tally.ack(ack.version)
                            } catch {
                                tally.fail(error)
                            }
                            index += plan.concurrency
                        }
                    }
                }
            }
            progress.cancel()
            client.close()
            await client.wait()
            context.terminate(timeout: .seconds(2))
            let result = tally.current
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            let rate = seconds > 0 ? Double(result.acked) / seconds : 0
            Output.line(#"{"sent":\#(total),"acked":\#(result.acked),"failed":\#(result.failed),"last_version":\#(result.lastVersion),"seconds":\#(String(format: "%.3f", seconds)),"per_second":\#(Int(rate))}"#)
            if case .refused(.wrongApp, let message)? = tally.gaveUp {
                throw CLIError.configuration("send: \(message): nothing was sent; use --app of the authority's app or the right --actions")
            }
            if let unreachable = tally.gaveUp {
                let unsent = total - result.acked - result.failed
                throw CLIError.unavailable("send: \(unreachable); \(result.acked) acked, \(result.failed) failed, \(unsent) not sent. "
                    + "Start the authority (\(program) authority --actions ...) or pass the right --actions, or raise --connect-timeout")
            }
            if let error = result.firstError {
                logger.error("\(result.failed) action(s) not acked; first error: \(error)")
                return 1
            }
            return 0
        }
    }
}
