import ArgumentParsing
import MetricsHTTP
import ReactorBus
import ReactorCore
import ReactorLog
import ZeroMQ
import SystemCalls

/// `reactor-node worker`: runs effects for an authority.
enum WorkerCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "worker",
            summary: "run the app's effects for an authority and send their mutations back",
            options: [
                node.apps.appOption,
                .value("authority", "EP[,EP...]", help: "the authority's workers endpoint; several, comma-separated: authorities that take over from one another, tried in order", default: "tcp://127.0.0.1:7002"),
                .value("election", "URLS", help: "read the authorities' endpoints from etcd (the elected primary first, then its standbys) instead of --authority"),
                .value("concurrency", "N", help: "effects run at once", default: "\(OptionDefaults.worker.concurrency)"),
                .value("effect-threads", "loop|pool", help: "where effects' code runs: loop, the worker's loop thread (effects move to the pool when one runs 10 ms of CPU without awaiting, or effects take half the loop's time), or pool, the shared pool, for effects that compute long or block", default: EffectThreads.loop.rawValue),
                .value("prefetch", "N", help: "jobs held waiting beyond those running, so a slot that frees starts the next at once (default: half of --concurrency, rounded up; 0: none)"),
                .value("name", "NAME", help: "how the authority logs this worker (default HOST-PID)"),
                .value("kinds", "K1,K2", help: "only these effect and subscription kinds (default: all)"),
                .value("part", "NAME", help: "only this part of a composed app (its kinds NAME.*)"),
                .value("attempts", "N", help: "attempts per effect before the app's failure hook applies", default: "\(OptionDefaults.worker.retry.maxAttempts)"),
                .value("effect-timeout", "SECONDS", help: "one attempt may take this long", default: OptionDefaults.seconds(OptionDefaults.worker.retry.timeout)),
                .value("heartbeat", "SECONDS", help: "heartbeat interval; \(OptionDefaults.worker.missedHeartbeats) missed = authority lost, reconnect (to the next --authority endpoint, if several)", default: OptionDefaults.seconds(OptionDefaults.worker.heartbeatInterval)),
            ] + node.apps.effectOptions + [
                CommonOptions.maxMessageBytes(default: OptionDefaults.worker.maxMessageBytes),
                MetricsEndpoint.option,
                CommonOptions.logLevel,
            ] + SecurityOptions.peer,
            discussion: """
            With --metrics, prints one JSON line to stdout once it serves them: {"metrics":"HOST:PORT"}.
            SIGINT/SIGTERM: take no new jobs, finish running ones (up to 5 s), say bye, exit 0; a second signal exits at once.
            """,
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        let app = try node.apps.app(arguments)
        let elected = try ElectedEndpoints.lists(["workers"], arguments, app: app.name, replacing: ["authority"])
        var configuration = WorkerConfiguration(
            authorityEndpoint: try Endpoint.validateList(try elected?[0] ?? arguments.required("authority"), flag: "authority"),
            appName: app.name,
            concurrency: try CommonOptions.int(arguments, "concurrency", in: 1...10_000),
            effectThreads: try effectThreads(arguments),
            prefetch: try CommonOptions.optionalInt(arguments, "prefetch", in: 0...10_000),
            kinds: arguments.string("kinds")?.split(separator: ",").map(String.init) ?? [],
            heartbeatInterval: try CommonOptions.seconds(arguments, "heartbeat") ?? OptionDefaults.worker.heartbeatInterval,
            retry: RetryPolicy(maxAttempts: try CommonOptions.int(arguments, "attempts", in: 1...100),
                               timeout: try CommonOptions.seconds(arguments, "effect-timeout")),
            maxMessageBytes: try CommonOptions.int(arguments, "max-message-bytes", in: 1_024...(1 << 30))
        )
        let part = arguments.string("part")
        if let part {
            guard app.parts.contains(part) else {
                throw CLIError.usage(app.parts.isEmpty ? "worker: app '\(app.name)' is not composed of parts: drop --part"
                                     : "worker: app '\(app.name)' has no part '\(part)'; its parts: \(app.parts.joined(separator: ", "))")
            }
            guard configuration.kinds.isEmpty else { throw CLIError.usage("worker: give --part or --kinds, not both") }
            configuration.kinds = ["\(part).*"]
        }
        if let name = arguments.string("name") { configuration.name = name }
        configuration.schemaVersion = app.schema.version
        configuration.security = try SecurityOptions.peer(arguments)
        let logger = try CommonOptions.logger("worker \(configuration.name)", arguments)
        let metrics = try MetricsEndpoint.address(arguments)
        return try await node.apps.visit(arguments, Runner(configuration: configuration, metrics: metrics, logger: logger,
                                                           subscriptions: app.subscriptionHandlers(part)), part: part)
    }

    /// `--effect-threads`.
    static func effectThreads(_ arguments: ParsedArguments) throws -> EffectThreads {
        let raw = try arguments.required("effect-threads")
        guard let threads = EffectThreads(rawValue: raw) else {
            throw CLIError.usage("\(arguments.command): '--effect-threads \(raw)' must be loop or pool")
        }
        return threads
    }

    struct Runner: AppVisitor {
        let configuration: WorkerConfiguration
        let metrics: MetricsAddress?
        let logger: Logger
        /// The app's subscription handler, if it has one.
        let subscriptions: (any Sendable)?

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32 where H.Effect == R.Effect, H.Mutation == R.Mutation {
            let context = try ZMQContext()
            let node = WorkerNode(reactor: reactor, effects: effects, subscriptions: subscriptions as? any SubscriptionHandler<R.Subscription, R.Action>,
                                  configuration: configuration, logger: logger, context: context)
            let labels = MetricsEndpoint.labels(app: configuration.appName, node: configuration.name)
            let server = try MetricsEndpoint.start(metrics, command: "worker", logger: logger) { node.metrics.metricFamilies(labels: labels) }
            defer { server?.stop() }
            if let server { Output.line(#"{"metrics":"\#(server.address)"}"#) }
            let trap = SignalTrap { signal in
                logger.info("signal \(signal): finishing running effects (send it again to stop at once)")
                node.stop()
            }
            do {
                try node.start()
            } catch {
                throw CLIError("worker: cannot start", error)
            }
            await node.wait()
            _ = trap
            context.terminate(timeout: .seconds(2))
            let metrics = node.metrics
            if let failure = node.failure { throw CLIError("worker: stopped", failure) }
            logger.info("stopped after \(metrics.jobsDone) job(s) done, \(metrics.jobsFailed) failed")
            return 0
        }
    }
}
