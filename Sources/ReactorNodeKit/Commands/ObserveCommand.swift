import ArgumentParsing
import MessagePack
import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import ZeroMQ
import SystemCalls

/// `reactor-node observe`: follows the state feed.
enum ObserveCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "observe",
            summary: "print the current state, then every newer snapshot from the feed",
            options: [
                node.apps.appOption,
                .value("feed", "EP[,EP...]", help: "the authority's feed endpoint; several, comma-separated: authorities that take over from one another, tried in order", default: "tcp://127.0.0.1:7003"),
                .value("actions", "EP[,EP...]", help: "the authority's actions endpoint (for the current snapshot); one per --feed endpoint, in the same order", default: "tcp://127.0.0.1:7001"),
                .value("election", "URLS", help: "read the authorities' endpoints from etcd (the elected primary first, then its standbys) instead of --feed and --actions"),
                .flag("json", help: #"one JSON line per snapshot: {"version":V,"state":{...}}"#),
                .flag("once", help: "print the current snapshot and exit (non-zero if none within --timeout)"),
                .value("projection", "NAME", help: #"follow this projection of the state, printed only when it changes: {"version":V,"projection":NAME,"value":...}"#),
                .value("timeout", "SECONDS", help: "with --once: how long to wait for the snapshot", default: "5"),
                CommonOptions.logLevel,
            ] + SecurityOptions.peer,
            discussion: "Data goes to stdout (one line per snapshot); logs to stderr. SIGINT/SIGTERM stops. With several authorities, a feed silent for 3 s moves observe to the next --feed/--actions pair, where it fetches the snapshot again.",
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        let registered = try node.apps.app(arguments)
        let app = registered.name
        let elected = try ElectedEndpoints.lists(["feed", "actions"], arguments, app: app, replacing: ["feed", "actions"])
        let feed = try Endpoint.validateList(try elected?[0] ?? arguments.required("feed"), flag: "feed")
        let actions = try Endpoint.validateList(try elected?[1] ?? arguments.required("actions"), flag: "actions")
        guard Endpoint.count(feed) == Endpoint.count(actions) else {
            throw CLIError.usage("observe: --feed lists \(Endpoint.count(feed)) endpoint(s) and --actions \(Endpoint.count(actions)): give one actions endpoint per feed endpoint, in the same order (the i-th of each is one authority's)")
        }
        let security = try SecurityOptions.peer(arguments)
        let timeout = try CommonOptions.seconds(arguments, "timeout") ?? .seconds(5)
        let logger = try CommonOptions.logger("observe", arguments)
        let json = arguments.flag("json")
        // Validate the app name even though snapshots are printed without decoding them.
        return try await node.apps.visit(arguments, Runner(app: app, schema: registered.schema, feed: feed, actions: actions, security: security, timeout: timeout, once: arguments.flag("once"), json: json, logger: logger, projection: arguments.string("projection")))
    }

    /// One output line for a projection's value.
    static func projectionLine(name: String, version: UInt64, payload: [UInt8], json: Bool) -> String {
        let value = (try? MessagePackValue(unpacking: payload).jsonText()) ?? "null"
        return json ? #"{"version":\#(version),"projection":\#(MessagePackValue.string(name).jsonText()),"value":\#(value)}"# : "version \(version): \(name) = \(value)"
    }

    /// One output line for a snapshot payload.
    static func line(version: UInt64, payload: [UInt8], json: Bool) -> String {
        let state = (try? MessagePackValue(unpacking: payload).jsonText()) ?? "null"
        return json ? #"{"version":\#(version),"state":\#(state)}"# : "version \(version): \(state)"
    }

    struct Runner: AppVisitor {
        let app: String
        let schema: AppSchema
        let feed: String
        let actions: String
        let security: ClientSecurity?
        let timeout: Duration
        let once: Bool
        let json: Bool
        let logger: Logger
        let projection: String?

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32 where H.Effect == R.Effect, H.Mutation == R.Mutation {
            let context = try ZMQContext()
            defer { context.terminate(timeout: .seconds(2)) }
            if let projection { return try await follow(projection, of: reactor, context: context) }
            if once {
                var configuration = ActionClientConfiguration(actionsEndpoint: actions, timeout: timeout, retries: 0, window: 1)
                // --timeout bounds the whole fetch, whether the authority is silent or absent.
                configuration.connectTimeout = timeout
                configuration.security = security
                configuration.schema = schema
                let client = try ActionClient<R>(configuration: configuration, logger: logger, context: context)
                try client.start()
                defer { client.close() }
                let snapshot: (version: UInt64, actionSeq: UInt64, app: String, payload: [UInt8])
                do {
                    snapshot = try await client.snapshotPayload()
                } catch .refused(.wrongApp, let message) {
                    throw CLIError.configuration("observe: \(message)")
                } catch .timedOut, .unreachable {
                    throw CLIError.unavailable("observe: no snapshot from \(actions) within \(timeout): the authority did not answer; check that it runs and that --actions is its actions endpoint, or raise --timeout")
                } catch {
                    throw CLIError.failed("observe: no snapshot from \(actions): \(error)")
                }
                guard snapshot.app == app else {
                    throw CLIError.configuration("observe: the authority at \(actions) runs app '\(snapshot.app)', not '\(app)': use --app \(snapshot.app)")
                }
                Output.line(ObserveCommand.line(version: snapshot.version, payload: snapshot.payload, json: json))
                return 0
            }
            var configuration = ObserverConfiguration(feedEndpoint: feed, actionsEndpoint: actions)
            configuration.security = security
            configuration.appName = app
            configuration.schema = schema
            let observer = try Observer<R>(configuration: configuration, logger: logger, context: context)
            let stream = observer.rawSnapshots()
            let trap = SignalTrap { _ in observer.stop() }
            try observer.start()
            for await snapshot in stream {
                Output.line(ObserveCommand.line(version: snapshot.version, payload: snapshot.payload, json: json))
            }
            await observer.wait()
            _ = trap
            if let failure = observer.failure { throw CLIError("observe: stopped", failure) }
            return 0
        }
    
        /// `--projection NAME`: the current value, then each change (or only the current one with --once).
        private func follow<R: Reactor>(_ name: String, of reactor: R, context: ZMQContext) async throws -> Int32 {
            var configuration = ObserverConfiguration(feedEndpoint: feed, actionsEndpoint: actions)
            configuration.security = security
            configuration.appName = app
            configuration.schema = schema
            let observer: ProjectionObserver<R>
            do {
                observer = try ProjectionObserver(reactor: reactor, projection: name, configuration: configuration, logger: logger, context: context)
            } catch let error as ProjectionObserverError {
                throw CLIError.usage("observe: \(error)")
            }
            defer { observer.close() }
            let stop = StopFlag()
            let trap = SignalTrap { _ in stop.set() }
            defer { _ = trap }
            do {
                guard let first = try await observer.next(timeout: timeout) else {
                    throw CLIError.unavailable("observe: no value of projection '\(name)' within \(timeout): check that the authority runs and that --feed and --actions are its endpoints, or raise --timeout")
                }
                Output.line(ObserveCommand.projectionLine(name: name, version: first.version, payload: first.payload, json: json))
                if once { return 0 }
                while !stop.isSet {
                    if let value = try await observer.next(timeout: .milliseconds(200)) {
                        Output.line(ObserveCommand.projectionLine(name: name, version: value.version, payload: value.payload, json: json))
                    }
                }
            } catch let error as ProtocolError where error.code == .wrongApp {
                throw CLIError.configuration("observe: \(error.message): use the authority's --app")
            } catch let error as ClientError {
                switch error {
                case .timedOut, .unreachable:
                    throw CLIError.unavailable("observe: no state from \(actions) within \(timeout): the authority did not answer; check that it runs and that --actions is its actions endpoint, or raise --timeout")
                default:
                    throw CLIError.failed("observe: no state from \(actions): \(error)")
                }
            }
            return 0
        }
    }
}
