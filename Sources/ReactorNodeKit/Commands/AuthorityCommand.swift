import ArgumentParsing
import Coordination
import MetricsHTTP
import ReactorBus
import ReactorCore
import ReactorLog
import ReactorStorage
import ZeroMQ
import SystemCalls

/// `reactor-node authority`: owns the state.
enum AuthorityCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "authority",
            summary: "own the state: accept actions, dispatch effects to workers, publish snapshots",
            options: [
                node.apps.appOption,
                .value("actions", "EP", help: "where clients send actions (bind)", default: "tcp://*:7001"),
                .value("workers", "EP", help: "where workers connect (bind)", default: "tcp://*:7002"),
                .value("feed", "EP", help: "where snapshots are published (bind)", default: "tcp://*:7003"),
            ] + persistenceOptions + replicationOptions + electionOptions + [
                .value("heartbeat", "SECONDS", help: "heartbeat interval with workers; \(OptionDefaults.authority.missedHeartbeats) missed = dead", default: OptionDefaults.seconds(OptionDefaults.authority.heartbeatInterval)),
                .value("job-timeout", "SECONDS", help: "give a job to another worker after this long", default: OptionDefaults.seconds(OptionDefaults.authority.jobTimeout)),
                .value("max-worker-capacity", "N", help: "most jobs one worker is given at once, whatever it announces", default: "\(OptionDefaults.authority.maxWorkerCapacity)"),
                .value("quarantine-after", "K", help: "job timeouts in a row that quarantine a worker (0 = never)", default: "\(OptionDefaults.authority.quarantineAfter)"),
                .value("max-in-flight", "N", help: "actions per client with unfinished effects before 'busy'", default: "\(OptionDefaults.authority.maxInFlightPerClient)"),
                .value("max-clients", "N", help: "clients whose resends are deduplicated; past it the least recently seen are forgotten and their resends refused", default: "\(OptionDefaults.authority.clientLedger.maxClients)"),
                .value("remembered-acks", "N", help: "acks kept per client, so a resend gets its original action_seq and is checked against its payload", default: "\(OptionDefaults.authority.clientLedger.rememberedAcks)"),
                .value("feed-queue-bytes", "N", help: "bytes queued per feed subscriber before it loses messages (and resyncs)", default: "\(OptionDefaults.authority.feedQueueBytes)"),
                .value("feed-snapshot-every", "N", help: "also publish a snapshot on the feed once the version moved by N since the last (0 = not by count)", default: "0"),
                .value("feed-snapshot-interval", "SECONDS", help: "publish feed snapshots at most this often, 'auto' (encoding them takes at most 5% of the loop's time) or 'off'", default: "auto"),
                .value("client-queue-bytes", "N", help: "bytes of snapshot/stats replies queued per client that does not read them, before its requests get 'busy'", default: "\(OptionDefaults.authority.clientQueueBytes)"),
                CommonOptions.maxMessageBytes(default: OptionDefaults.authority.maxMessageBytes),
                MetricsEndpoint.option,
                CommonOptions.logLevel,
            ] + SecurityOptions.authority,
            discussion: """
            Once bound, prints one JSON line to stdout with the real endpoints, e.g.
              {"actions":"tcp://0.0.0.0:7001","workers":"tcp://0.0.0.0:7002","feed":"tcp://0.0.0.0:7003"}
            (with "replication":EP added when --replication is given, "metrics":"HOST:PORT" when --metrics is).
            A standby (--standby) prints {"standby_of":EP} and binds nothing else until promoted
            by SIGUSR1; it then prints the endpoints line.
            SIGINT/SIGTERM: finish the batch in hand, write a snapshot, exit 0; a second signal exits at once.
            """,
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        let app = try node.apps.app(arguments)
        var configuration = try AuthorityConfiguration.binding(app: app, arguments, workersFlag: "workers")
        configuration.heartbeatInterval = try CommonOptions.seconds(arguments, "heartbeat") ?? OptionDefaults.authority.heartbeatInterval
        configuration.jobTimeout = try CommonOptions.seconds(arguments, "job-timeout") ?? OptionDefaults.authority.jobTimeout
        configuration.maxWorkerCapacity = try CommonOptions.int(arguments, "max-worker-capacity", in: 1...1_000_000)
        configuration.quarantineAfter = try CommonOptions.int(arguments, "quarantine-after", in: 0...1_000_000)
        configuration.maxInFlightPerClient = try CommonOptions.int(arguments, "max-in-flight", in: 1...10_000_000)
        let maxClients = try CommonOptions.int(arguments, "max-clients", in: 1...100_000_000)
        configuration.clientLedger = ClientLedgerLimits(
            rememberedAcks: try CommonOptions.int(arguments, "remembered-acks", in: 1...4_096),
            maxClients: maxClients,
            maxForgottenClients: ClientLedgerLimits.forgottenClients(forMaxClients: maxClients)
        )
        configuration.feedQueueBytes = try CommonOptions.int(arguments, "feed-queue-bytes", in: 4_096...(1 << 40))
        configuration.clientQueueBytes = try CommonOptions.int(arguments, "client-queue-bytes", in: 4_096...(1 << 40))
        configuration.feedSnapshots = try feedSnapshots(arguments)
        configuration.maxMessageBytes = Int64(try CommonOptions.int(arguments, "max-message-bytes", in: 1_024...(1 << 30)))
        configuration.persistence = try persistence(arguments)
        configuration.security = try SecurityOptions.authority(arguments)
        configuration.replication = try replication(arguments, persistence: configuration.persistence)
        let logger = try CommonOptions.logger("authority", arguments)
        let metrics = try MetricsEndpoint.address(arguments)
        if let election = try election(arguments, configuration: configuration) {
            return try await node.apps.visit(arguments, ElectedRunner(configuration: configuration, election: election, metrics: metrics, logger: logger))
        }
        return try await node.apps.visit(arguments, Runner(configuration: configuration, metrics: metrics, logger: logger))
    }

    /// What `--election` asks for, checked against the rest of the command line.
    struct ElectionSettings {
        var client: EtcdClient
        var ttl: Int64
        var candidate: LeaderInfo
    }

    static func election(_ arguments: ParsedArguments, configuration: AuthorityConfiguration) throws -> ElectionSettings? {
        guard let urls = arguments.string("election") else { return nil }
        guard configuration.persistence != nil else { throw CLIError.usage("authority: --election needs --data DIR (a standby copies the primary's journal there)") }
        guard let replication = configuration.replication?.endpoint else {
            throw CLIError.usage("authority: --election needs --replication EP (where standbys follow this authority once it is primary)")
        }
        guard configuration.replication?.standbyOf == nil else {
            throw CLIError.usage("authority: give --election or --standby, not both (the election decides whom to follow)")
        }
        let ttl = try CommonOptions.int(arguments, "election-ttl", in: 1...60)
        let client: EtcdClient
        do {
            client = try EtcdClient(endpointList: urls)
        } catch {
            throw CLIError.usage("authority: --election \(urls): \(error)")
        }
        let host = arguments.string("advertise") ?? HostName.current() ?? "localhost"
        func advertised(_ endpoint: String) -> String {
            endpoint.replacingOccurrences(of: "://*:", with: "://\(host):").replacingOccurrences(of: "://0.0.0.0:", with: "://\(host):")
        }
        let name = arguments.string("name") ?? WorkerConfiguration.defaultName()
        let candidate = LeaderInfo(name: name, endpoints: [
            "replication": advertised(replication), "actions": advertised(configuration.actionsEndpoint),
            "workers": advertised(configuration.workersEndpoint), "feed": advertised(configuration.feedEndpoint),
        ])
        return ElectionSettings(client: client, ttl: Int64(ttl), candidate: candidate)
    }

    /// The feed's snapshot schedule from `--feed-snapshot-every` and `--feed-snapshot-interval`.
    static func feedSnapshots(_ arguments: ParsedArguments) throws -> FeedSnapshotPolicy {
        let every = UInt64(try CommonOptions.int(arguments, "feed-snapshot-every", in: 0...Int.max))
        let interval: FeedSnapshotPolicy.Interval
        switch try arguments.required("feed-snapshot-interval") {
        case "auto": interval = FeedSnapshotPolicy.adaptive.interval
        case "off": interval = .off
        case let raw:
            guard let duration = try CommonOptions.seconds(arguments, "feed-snapshot-interval") else {
                throw CLIError.usage("\(arguments.command): '--feed-snapshot-interval \(raw)' must be auto, off or a number of seconds")
            }
            interval = .every(duration)
        }
        return FeedSnapshotPolicy(everyVersions: every, interval: interval)
    }

    /// `--election` and what it needs: the etcd endpoints, the lease, this candidate's name and
    /// the host its endpoints are published with.
    static let electionOptions: [Option] = [
        .value("election", "URLS", help: "take part in an election on etcd (http://HOST:2379[,...]): primary while holding the lease, standby otherwise; needs --data and --replication"),
        .value("election-ttl", "SECONDS", help: "the leader lease; a dead primary is replaced within about this long", default: "2"),
        .value("name", "NAME", help: "this candidate's name in the election (default HOST-PID)"),
        .value("advertise", "HOST", help: "the host other authorities reach this one's --replication at (replaces * and 0.0.0.0; default: the host name)"),
    ]

    /// `--replication`, `--replication-mode` and `--standby`.
    static let replicationOptions: [Option] = [
        .value("replication", "EP", help: "serve standbys here (bind): stream the journal to them; needs --data"),
        .value("replication-mode", "MODE", help: "async (ack after the local journal) or sync (also after one standby has the record)", default: "async"),
        .value("standby", "EP", help: "follow the primary whose --replication is EP; promote with SIGUSR1; needs --data"),
    ]

    /// The replication those options ask for; `nil` for none.
    static func replication(_ arguments: ParsedArguments, persistence: PersistenceConfiguration?) throws -> ReplicationConfiguration? {
        let raw = try arguments.required("replication-mode")
        guard let mode = ReplicationConfiguration.Mode(rawValue: raw) else {
            throw CLIError.usage("\(arguments.command): '--replication-mode \(raw)' must be async or sync")
        }
        let endpoint = try arguments.string("replication").map { try Endpoint.validate($0, flag: "replication", binding: true) }
        let primary = try arguments.string("standby").map { try Endpoint.validate($0, flag: "standby", binding: false) }
        if endpoint == nil && primary == nil {
            if mode == .sync { throw CLIError.usage("\(arguments.command): --replication-mode sync needs --replication EP (where standbys connect)") }
            return nil
        }
        if persistence == nil {
            throw CLIError.usage("\(arguments.command): \(primary != nil ? "--standby" : "--replication") needs --data DIR (replication streams the journal)")
        }
        return ReplicationConfiguration(endpoint: endpoint, mode: mode, standbyOf: primary)
    }

    /// `--data`, `--fsync` and the snapshot and repair options (shared with `run`).
    static let persistenceOptions: [Option] = [
            .value("data", "DIR", help: "keep a journal and snapshots here; without it, state is in memory only"),
            .value("fsync", "POLICY", help: "always (before each ack), batch (once per batch, before its acks) or none", default: "\(OptionDefaults.persistence.fsync)"),
            .value("snapshot-every", "N", help: "write a snapshot after N journal records", default: "\(OptionDefaults.persistence.snapshotEveryRecords)"),
            .value("snapshot-interval", "SECONDS", help: "or after this long", default: OptionDefaults.seconds(OptionDefaults.persistence.snapshotInterval)),
            .value("snapshot-dir", "DIR", help: "keep snapshots here instead of DATA/snapshots: on another filesystem than the journal, writing one does not slow the acks"),
            .value("snapshot-replica-above", "BYTES", help: "once a snapshot is this large, write the next ones from a replica of the state kept on its own thread (the loop then never copies its state for one; costs each record's CPU and the state's memory a second time); 0 = always, off = never", default: OptionDefaults.replicaSnapshotsAbove),
            .value("repair", "truncate", help: "start even if the journal is damaged before its end, cutting it there (what follows is lost and logged); without it such damage exits 65"),
    ]

    /// The persistence those options ask for; `nil` (state in memory only) without `--data`.
    static func persistence(_ arguments: ParsedArguments) throws -> PersistenceConfiguration? {
        if let directory = arguments.string("data") {
            let raw = try arguments.required("fsync")
            guard let policy = FsyncPolicy(raw) else { throw CLIError.usage("\(arguments.command): '--fsync \(raw)' must be always, batch or none") }
            var persistence = PersistenceConfiguration(directory: directory, fsync: policy)
            persistence.snapshotEveryRecords = UInt64(try CommonOptions.int(arguments, "snapshot-every", in: 1...Int.max))
            persistence.snapshotInterval = try CommonOptions.seconds(arguments, "snapshot-interval") ?? OptionDefaults.persistence.snapshotInterval
            persistence.snapshotDirectory = arguments.string("snapshot-dir")
            persistence.replicaSnapshotsAbove = try replicaSnapshotsAbove(arguments)
            if let raw = arguments.string("repair") {
                guard let repair = JournalRepairPolicy(raw) else { throw CLIError.usage("\(arguments.command): '--repair \(raw)' must be truncate (or refuse, the default)") }
                persistence.repair = repair
            }
            return persistence
        } else if arguments.string("repair") != nil {
            throw CLIError.usage("\(arguments.command): --repair needs --data")
        } else if arguments.string("snapshot-dir") != nil {
            throw CLIError.usage("\(arguments.command): --snapshot-dir needs --data")
        }
        return nil
    }

    /// `--snapshot-replica-above`: a size in bytes, or `off`.
    private static func replicaSnapshotsAbove(_ arguments: ParsedArguments) throws -> Int? {
        let raw = try arguments.required("snapshot-replica-above")
        if raw == "off" { return nil }
        guard let bytes = Int(raw), bytes >= 0 else {
            throw CLIError.usage("\(arguments.command): '--snapshot-replica-above \(raw)' must be a number of bytes (0 = always) or off")
        }
        return bytes
    }

    struct Runner: AppVisitor {
        let configuration: AuthorityConfiguration
        let metrics: MetricsAddress?
        let logger: Logger

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32 where H.Effect == R.Effect, H.Mutation == R.Mutation {
            let context = try ZMQContext()
            let node = try AuthorityNode(reactor: reactor, configuration: configuration, logger: logger, context: context)
            let labels = MetricsEndpoint.labels(app: configuration.appName, node: "authority")
            let server = try MetricsEndpoint.start(metrics, command: "authority", logger: logger) { node.metrics.metricFamilies(labels: labels) }
            defer { server?.stop() }
            let trap = SignalTrap { signal in
                logger.info("signal \(signal): stopping gracefully (send it again to stop at once)")
                node.stop()
            }
            let standby = configuration.replication?.standbyOf != nil
            let promoteSignal = PromoteSignal {
                guard standby else {
                    logger.info("signal SIGUSR1: this authority is the primary already; nothing to promote")
                    return
                }
                Task {
                    logger.info("signal SIGUSR1: promoting")
                    do {
                        let endpoints = try await node.promote()
                        Output.endpoints(endpoints, metrics: server?.address)
                    } catch {
                        logger.error("promotion failed: \(error)")
                    }
                }
            }
            let endpoints: AuthorityNode<R>.Endpoints
            do {
                endpoints = try await node.start()
            } catch let error as ZMQError {
                throw CLIError("authority: cannot bind", error)
            } catch {
                throw CLIError("authority: cannot start", error)
            }
            Output.endpoints(endpoints, metrics: server?.address)
            await node.wait()
            _ = trap
            _ = promoteSignal
            context.terminate(timeout: .seconds(2))
            let metrics = node.metrics
            if let failure = node.failure {
                throw CLIError("authority: stopped at version \(metrics.version)", failure)
            }
            logger.info("stopped at version \(metrics.version) after \(metrics[.actionsAccepted]) action(s)")
            return 0
        }
    }

    /// Runs the app's authority under an election (``ElectedAuthority``).
    struct ElectedRunner: AppVisitor {
        let configuration: AuthorityConfiguration
        let election: ElectionSettings
        let metrics: MetricsAddress?
        let logger: Logger

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32 where H.Effect == R.Effect, H.Mutation == R.Mutation {
            let leaderElection: LeaderElection
            do {
                leaderElection = try LeaderElection(client: election.client, configuration: LeaderElectionConfiguration(app: configuration.appName, ttlSeconds: election.ttl))
            } catch {
                throw CLIError.usage("authority: --election-ttl \(election.ttl): \(error)")
            }
            let stop = ElectionStop()
            let trap = SignalTrap { signal in
                logger.info("signal \(signal): stopping gracefully (send it again to stop at once)")
                stop.set()
            }
            let nodes = CurrentNode<R>()
            let labels = MetricsEndpoint.labels(app: configuration.appName, node: "authority")
            let server = try MetricsEndpoint.start(metrics, command: "authority", logger: logger) { (nodes.metrics ?? AuthorityMetrics()).metricFamilies(labels: labels) }
            defer { server?.stop() }
            logger.info("candidate \(election.candidate.name) in the election of \(configuration.appName) (lease \(election.ttl) s)")
            let elected = ElectedAuthority(reactor: reactor, configuration: configuration, election: leaderElection, client: election.client,
                                           candidate: election.candidate, ttl: Duration.seconds(election.ttl), logger: logger, metrics: server?.address,
                                           stopping: stop, nodes: nodes)
            let status = try await elected.run()
            _ = trap
            return status
        }
    }
}
