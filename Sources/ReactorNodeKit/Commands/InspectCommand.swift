import ArgumentParsing
import Glibc
import MessagePack
import MetricsHTTP
import ReactorBus
import ReactorCore
import ReactorLog
import Synchronization
import SystemCalls
import ZeroMQ

/// `reactor-node inspect`: a read-only web page on a running cluster or a data directory (the
/// live state, the action log with diffs, charts, workers and observers, time travel).
enum InspectCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "inspect",
            summary: "serve a read-only web page on a running cluster or a data directory (state, actions, diffs, charts, time travel)",
            options: [
                node.apps.appOption,
                .value("feed", "EP", help: "the authority's feed endpoint, to follow the cluster live (with --actions)"),
                .value("actions", "EP", help: "the authority's actions endpoint: snapshots and stats only, no action is ever sent"),
                .value("data", "DIR", help: "the authority's data directory: time travel to any version it holds; without --feed, the page follows its journal"),
                .value("snapshot-dir", "DIR", help: "where the data directory's snapshots are, if not DATA/snapshots"),
                .value("listen", "HOST:PORT", help: "where the page is served (port 0: any free one, printed)", default: "127.0.0.1:7080"),
                .value("keep-versions", "N", help: "mutations (versions) kept in memory for action details and time travel", default: "10000"),
                .value("keep-actions", "N", help: "actions kept in the action log", default: "1000"),
                .value("checkpoint-every", "N", help: "a full state kept every N versions (memory: about keep-versions/N + 2 states)", default: "500"),
                .value("stats-interval", "SECONDS", help: "how often the authority's stats are polled for the charts", default: "1"),
                .value("keep-stats", "N", help: "stats polls kept for the charts (600 at 1 s: ten minutes)", default: "600"),
                CommonOptions.logLevel,
            ],
            discussion: """
            Prints one JSON line, {"inspect":"http://HOST:PORT/"}, once the page is served; logs go
            to stderr; SIGINT/SIGTERM stops. With --feed and --actions it subscribes to the feed and
            keeps the state itself (a fetched snapshot reduced by every mutation with the app's own
            reduce), asks the actions socket only for snapshots and stats, and never sends an
            action. With --data it also rebuilds any version the directory holds (replayed from the
            nearest snapshot through the authority's engine, like 'replay'); with --data alone it
            follows the journal instead of the feed (the actions themselves and the jobs' ends are
            then shown too). Memory is bounded by --keep-versions, --keep-actions,
            --checkpoint-every and --keep-stats. JSON under /api/: summary, state, state/VERSION,
            actions, actions/SEQ, stats, and server-sent events at /api/events.
            """,
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        let app = try node.apps.app(arguments)
        let feed = try arguments.string("feed").map { text throws(CLIError) in try Endpoint.validate(text, flag: "feed", binding: false) }
        let actions = try arguments.string("actions").map { text throws(CLIError) in try Endpoint.validate(text, flag: "actions", binding: false) }
        let address: MetricsAddress
        do {
            address = try MetricsAddress(parsing: try arguments.required("listen"))
        } catch let error as MetricsHTTPError {
            throw CLIError.usage("inspect: --listen \(error)")
        }
        if feed != nil && actions == nil {
            throw CLIError.usage("inspect: --feed needs --actions too: the current state is fetched from the authority's actions endpoint (e.g. --actions tcp://127.0.0.1:7001)")
        }
        if feed == nil && arguments.string("data") == nil {
            throw CLIError.usage("inspect: nothing to inspect: give --feed EP --actions EP for a running cluster, --data DIR for a data directory, or both")
        }
        let data = try arguments.string("data").map { _ in try JournalCommand.directoryReader(arguments, app: app.name).directory }
        var limits = InspectorLimits()
        limits.versions = try CommonOptions.int(arguments, "keep-versions", in: 1...10_000_000)
        limits.actions = try CommonOptions.int(arguments, "keep-actions", in: 1...1_000_000)
        limits.checkpointEvery = try CommonOptions.int(arguments, "checkpoint-every", in: 1...10_000_000)
        limits.statsSamples = try CommonOptions.int(arguments, "keep-stats", in: 2...1_000_000)
        let interval = try CommonOptions.seconds(arguments, "stats-interval") ?? .seconds(1)
        guard interval >= .milliseconds(10) else { throw CLIError.usage("inspect: --stats-interval must be at least 0.01 seconds") }
        let logger = try CommonOptions.logger("inspect", arguments)
        let setup = Setup(app: app.name, schema: app.schema, feed: feed, actions: actions, data: data, snapshotDirectory: arguments.string("snapshot-dir"),
                          address: address, limits: limits, statsInterval: interval, logger: logger)
        return try await node.apps.visit(arguments, setup)
    }

    struct Setup: AppVisitor {
        let app: String
        let schema: AppSchema
        let feed: String?
        let actions: String?
        let data: String?
        let snapshotDirectory: String?
        let address: MetricsAddress
        let limits: InspectorLimits
        let statsInterval: Duration
        let logger: Logger

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32 where H.Effect == R.Effect, H.Mutation == R.Mutation {
            let history = InspectorHistory(reactor: reactor, limits: limits)
            let journal = data.map { InspectorJournal(directory: $0, app: app, snapshotDirectory: snapshotDirectory, schema: schema, reactor: reactor) }
            let context = try ZMQContext()
            defer { context.terminate(timeout: .seconds(2)) }

            var client: ActionClient<R>?
            if let actions {
                var configuration = ActionClientConfiguration(actionsEndpoint: actions, timeout: .seconds(5), retries: 0, window: 1)
                configuration.connectTimeout = .seconds(5)
                configuration.schema = schema
                let made = try ActionClient<R>(configuration: configuration, logger: logger, context: context)
                try made.start()
                client = made
            }
            defer { client?.close() }

            let (stops, stop) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let stopReason = InspectStop()
            let trap = SignalTrap { _ in stop.yield() }
            defer { _ = trap }

            var tasks: [Task<Void, Never>] = []
            defer { for task in tasks { task.cancel() } }
            var feedFollower: InspectorFeed<R>?
            if let journal, feed != nil {
                logger.info("inspect: reading the journal of \(journal.directory)")
                // What the data directory holds first, so that the action log and time travel
                // reach back before the inspector started; the feed continues from there.
                do {
                    try journal.follow(into: history, mutations: true)
                } catch {
                    logger.warning("inspect: cannot read the journal of \(journal.directory): \(error); following the feed only")
                }
            }
            if let feed, let client {
                let (requests, request) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                feedFollower = InspectorFeed(endpoint: feed, context: context, history: history, logger: logger,
                                             needSnapshot: { request.yield() }, failed: { stop.yield() })
                tasks.append(Task { await Self.fetchSnapshots(requests, client: client, app: app, history: history, logger: logger,
                                                                   stopReason: stopReason, stop: stop) })
            }
            if let journal {
                // Without a feed the journal is the source; with one, it adds what the feed does
                // not carry (the actions, the jobs' ends).
                let mutations = feedFollower == nil
                tasks.append(Task.detached { await Self.followJournal(journal, mutations: mutations, history: history, logger: logger) })
            }
            if let client {
                tasks.append(Task { await Self.pollStats(client: client, every: statsInterval, history: history) })
            }
            defer { feedFollower?.stopAndWait() }

            let routes = InspectorRoutes(app: app, feed: feed, actionsEndpoint: actions, history: history, journal: journal)
            let server: RoutingHTTPServer
            do {
                var serverLimits = MetricsHTTPServer.Limits()
                serverLimits.connections = 64
                server = try RoutingHTTPServer(address: address, limits: serverLimits) { routes.reply($0) }
            } catch {
                if case .cannotListen(_, _, let code) = error, code == EADDRINUSE || code == EADDRNOTAVAIL {
                    throw CLIError.unavailable("inspect: cannot serve the page: \(error); stop whatever holds that port or choose another --listen")
                }
                throw CLIError.failed("inspect: cannot serve the page: \(error)")
            }
            defer { server.stop() }
            let url = "http://\(server.address)/"
            Output.line(MessagePackValue.object([("inspect", .string(url)), ("app", .string(app))]).jsonText())
            logger.info("inspector for app '\(app)' at \(url)")

            for await _ in stops { break }
            if let failure = feedFollower?.failure.withLock({ $0 }) { throw CLIError("inspect: the feed", failure) }
            if let reason = stopReason.reason.withLock({ $0 }) { throw CLIError.configuration(reason) }
            return 0
        }

        /// Fetches the current snapshot whenever the history asks (at start, after a gap),
        /// retrying every second while the authority does not answer.
        static func fetchSnapshots<R: Reactor>(_ requests: AsyncStream<Void>, client: ActionClient<R>, app: String, history: InspectorHistory<R>,
                                               logger: Logger, stopReason: InspectStop, stop: AsyncStream<Void>.Continuation) async {
            for await _ in requests {
                var again = true
                while again && !Task.isCancelled {
                    do {
                        let snapshot = try await client.snapshotPayload()
                        guard snapshot.app == app else {
                            stopReason.reason.withLock { $0 = "inspect: the authority at \(client.configuration.actionsEndpoint) runs app '\(snapshot.app)', not '\(app)': use --app \(snapshot.app)" }
                            stop.yield()
                            return
                        }
                        let state = try MessagePackDecoder().decode(R.State.self, from: snapshot.payload)
                        again = history.install(version: snapshot.version, actionSeq: snapshot.actionSeq, state: state)
                        logger.debug("inspect: snapshot at version \(snapshot.version)")
                    } catch {
                        logger.warning("inspect: no snapshot from \(client.configuration.actionsEndpoint) yet: \(error); retrying in 1 s")
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
            }
        }

        /// Polls the authority's stats for the charts and the workers and observers shown.
        static func pollStats<R: Reactor>(client: ActionClient<R>, every interval: Duration, history: InspectorHistory<R>) async {
            while !Task.isCancelled {
                if let counters = try? await client.stats() { history.addStats(counters) }
                try? await Task.sleep(for: interval)
            }
        }

        /// Reads the records appended to the journal, every half second.
        static func followJournal<R: Reactor>(_ journal: InspectorJournal<R>, mutations: Bool, history: InspectorHistory<R>, logger: Logger) async {
            var failing = false
            while !Task.isCancelled {
                do {
                    try journal.follow(into: history, mutations: mutations)
                    failing = false
                } catch {
                    if !failing { logger.warning("inspect: cannot read the journal of \(journal.directory): \(error); retrying") }
                    failing = true
                }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }
}

/// Why `inspect` stopped on its own (the authority serves another app), set by the task that
/// found out, read once the command stops.
final class InspectStop: Sendable {
    let reason = Mutex<String?>(nil)
}
