import ArgumentParsing
import MetricsHTTP
import ReactorBus
import ReactorCore
import ReactorLog
import SystemCalls
import ZeroMQ

/// `reactor-node run`: the whole deployment of one app in one process, for development.
enum RunCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "run",
            summary: "authority, workers and an observer of one app in one process (development)",
            options: [
                node.apps.appOption,
                .value("workers", "N", help: "workers started in this process", default: "2"),
                .value("concurrency", "N", help: "effects each worker runs at once", default: "\(OptionDefaults.worker.concurrency)"),
                .value("actions", "EP", help: "where clients send actions (bind)", default: "tcp://127.0.0.1:*"),
                .value("workers-endpoint", "EP", help: "where the workers connect (bind; other worker processes may join)", default: "tcp://127.0.0.1:*"),
                .value("feed", "EP", help: "where snapshots are published (bind)", default: "tcp://127.0.0.1:*"),
            ] + AuthorityCommand.persistenceOptions + node.apps.effectOptions + [
                .flag("json", help: #"one JSON line per snapshot: {"version":V,"state":{...}}"#),
                MetricsEndpoint.option,
                CommonOptions.logLevel,
            ],
            discussion: """
            Once bound, prints one JSON line to stdout with the real endpoints (as 'authority' does), e.g.
              {"actions":"tcp://127.0.0.1:40001","workers":"tcp://127.0.0.1:40002","feed":"tcp://127.0.0.1:40003"}
            (with "metrics":"HOST:PORT" when --metrics is given: the authority's and every worker's, by node label),
            then one line per snapshot (as 'observe' does). Send actions with '\(node.name) send --actions EP'.
            SIGINT/SIGTERM: stop the observer, let the workers finish running effects, stop the
            authority (which writes a snapshot with --data), exit 0; a second signal exits at once.
            """,
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        let app = try node.apps.app(arguments)
        var configuration = try AuthorityConfiguration.binding(app: app, arguments, workersFlag: "workers-endpoint")
        configuration.persistence = try AuthorityCommand.persistence(arguments)
        let runner = Runner(
            configuration: configuration,
            workerCount: try CommonOptions.int(arguments, "workers", in: 0...256),
            concurrency: try CommonOptions.int(arguments, "concurrency", in: 1...10_000),
            json: arguments.flag("json"),
            metrics: try MetricsEndpoint.address(arguments),
            logger: try CommonOptions.logger("run", arguments),
            subscriptions: app.subscriptionHandler
        )
        return try await node.apps.visit(arguments, runner)
    }

    struct Runner: AppVisitor {
        let configuration: AuthorityConfiguration
        let workerCount: Int
        let concurrency: Int
        let json: Bool
        let metrics: MetricsAddress?
        let logger: Logger
        /// The app's subscription handler, if it has one.
        let subscriptions: (any Sendable)?

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32 where H.Effect == R.Effect, H.Mutation == R.Mutation {
            let context = try ZMQContext()
            defer { context.terminate(timeout: .seconds(2)) }
            let (signals, signalled) = AsyncStream.makeStream(of: Int32.self)
            let logger = self.logger
            let trap = SignalTrap { signal in
                logger.info("signal \(signal): stopping gracefully (send it again to stop at once)")
                signalled.yield(signal)
            }
            let cluster: LocalCluster<R, H>
            do {
                cluster = try await LocalCluster(reactor: reactor, effects: effects,
                                                 subscriptions: subscriptions as? any SubscriptionHandler<R.Subscription, R.Action>,
                                                 configuration: configuration, workerCount: workerCount,
                                                 workerConcurrency: concurrency, context: context, logger: logger)
            } catch {
                throw CLIError("run: cannot start", error)
            }
            let server: MetricsHTTPServer?
            do {
                server = try MetricsEndpoint.start(metrics, command: "run", logger: logger) { [cluster] in
                    let app = configuration.appName
                    return cluster.authority.metrics.metricFamilies(labels: MetricsEndpoint.labels(app: app, node: "authority"))
                        + cluster.workers.flatMap { $0.metrics.metricFamilies(labels: MetricsEndpoint.labels(app: app, node: $0.configuration.name)) }
                }
            } catch {
                await cluster.shutdown()
                throw error
            }
            defer { server?.stop() }
            let endpoints = cluster.endpoints
            Output.endpoints(endpoints, metrics: server?.address)
            let stream = cluster.observer.rawSnapshots()
            let json = self.json
            let printer = Task {
                for await snapshot in stream {
                    Output.line(ObserveCommand.line(version: snapshot.version, payload: snapshot.payload, json: json))
                }
            }
            do {
                try cluster.observer.start()
            } catch {
                await cluster.shutdown()
                throw CLIError("run: cannot start the observer", error)
            }
            // Until a signal, or until the authority stops by itself (a fatal storage error).
            let authority = cluster.authority
            let stopped = Task {
                await authority.wait()
                signalled.finish()
            }
            for await _ in signals { break }
            await cluster.shutdown()
            await printer.value
            await stopped.value
            _ = trap
            let metrics = authority.metrics
            if let failure = authority.failure {
                throw CLIError("run: authority stopped at version \(metrics.version)", failure)
            }
            logger.info("stopped at version \(metrics.version) after \(metrics[.actionsAccepted]) action(s)")
            return 0
        }
    }
}
