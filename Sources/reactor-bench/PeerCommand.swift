import ArgumentParsing
import Glibc
import ReactorBus
import ZeroMQ

/// `reactor-bench peer ROLE`: the processes `reactor-bench` starts, one role each.
///
/// Hidden from `--help`: it is the bench's own plumbing. Every role prints JSON lines on stdout
/// (`{"event":"ready",...}`, `{"event":"result",...}`) and logs on stderr.
///
/// | role | what it is |
/// | --- | --- |
/// | `guard -- PROGRAM ARGS` | asks for SIGTERM when the bench dies, then becomes PROGRAM |
/// | `raw-pub`, `raw-sub`, `raw-echo`, `raw-client` | the raw libzmq baseline (``RawZMQBaseline``) |
/// | `raw-chunk-server`, `raw-chunk-client` | a state's bytes copied in chunks (``RawChunkBaseline``) |
/// | `state-decode` | a state's bytes decoded once, with msgpack-c alone or with Codable (``StateFloor``) |
/// | `client` | pipelines actions to an authority (``BenchClientPeer``) |
/// | `observe` | follows the feed until a version (``BenchObserverPeer``) |
/// | `ping` | times `ping` round trips to an authority under load (``BenchPingPeer``) |
/// | `snapshot-sub` | subscribes to the feed's snapshots (``BenchSnapshotSubscriber``) |
/// | `fetcher` | fetches the whole state again and again (``BenchFetcherPeer``) |
/// | `pipeline-authority` | the counter's authority on libzmq and msgpack-c calls alone (``PipelineBaselineAuthority``) |
/// | `pipeline-worker` | its worker for `countUpAsync`, on the same calls alone (``PipelineBaselineWorker``) |
/// | `clients` | many clients at once, a connection each (``BenchClientsPeer``) |
enum PeerCommand {
    static let roles = ["guard", "raw-pub", "raw-sub", "raw-echo", "raw-client", "raw-chunk-server", "raw-chunk-client", "state-decode", "client", "observe", "ping", "snapshot-sub",
                        "fetcher", "pipeline-authority", "pipeline-worker", "clients"]

    static let spec = Command(
        name: "peer",
        summary: "one process of reactor-bench (internal)",
        options: ([
            .value("parent", "PID", help: "guard: the bench's pid"),
            .value("endpoint", "EP", help: "raw roles and client: where to connect; pipeline-worker: the authority's workers endpoint"),
            .value("feed", "EP", help: "observe and snapshot-sub: the feed endpoint; pipeline-authority: where to publish it (bind)"),
            .value("actions", "EP", help: "pipeline-authority: where clients send actions (bind)"),
            .value("workers", "EP", help: "pipeline-authority: where baseline workers connect (bind); without it, countUp only"),
            .value("capacity", "N", help: "pipeline-worker: jobs it announces it takes at once", default: "256"),
            .value("connections", "N", help: "clients: how many clients, a connection each", default: "1"),
            .value("app", "NAME", help: "observe: the app", default: "counter"),
            .value("count", "N", help: "messages or actions; snapshot-sub and fetcher: versions to follow past the first seen", default: "1000"),
            .value("window", "N", help: "in flight at once", default: "1000"),
            .value("mode", "MODE", help: "raw-client: rtt or pipeline; state-decode: floor or codable", default: "rtt"),
            .value("frames", "B1,B2", help: "raw roles: frame sizes in bytes", default: "52,10"),
            .value("reply", "BYTES", help: "raw-echo: reply size", default: "21"),
            .value("workload", "NAME", help: "client: countUp, countUpAsync, inventory or catalog", default: "countUp"),
            .value("bytes", "N", help: "raw-chunk roles: the bytes to copy", default: "1024"),
            .value("chunk-bytes", "N", help: "raw-chunk-client: bytes per chunk", default: "1048576"),
            .value("credit", "N", help: "raw-chunk-client: chunk requests outstanding", default: "4"),
            .value("file", "PATH", help: "state-decode: the state's MessagePack bytes"),
            .value("max-seconds", "SECONDS", help: "client: stop issuing actions after this long"),
            .flag("record", help: "client and observe: keep per-action times"),
            .value("verify-field", "FIELD", help: "client: report this field of the final snapshot"),
            .flag("stats", help: "client: report the authority's counters after the run"),
            .value("wait-workers", "N", help: "client: wait until N workers registered", default: "0"),
            .value("progress-every", "N", help: "client: a progress line every N acks", default: "0"),
            .value("echo", "EP", help: "client: a raw-echo to time round trips against between rounds of actions"),
            .value("round", "N", help: "client with --echo: actions and round trips per round", default: "500"),
            .value("clients", "N", help: "client: spread the actions over N client identities", default: "1"),
            .value("interval-ms", "MS", help: "ping: a ping this often (one in flight); fetcher: the pause between two fetches", default: "5"),
            .value("until-accepted", "N", help: "ping: stop once the authority accepted N actions", default: "1"),
            .value("until-snapshots", "N", help: "ping: ... and wrote N snapshots", default: "0"),
            .value("field", "FIELD", help: "observe: the state field to report", default: "count"),
            .value("until-version", "V", help: "observe: stop once this version is seen", default: "1"),
            .value("timeout", "SECONDS", help: "observe, snapshot-sub and fetcher: give up after this long", default: "60"),
        ] as [Option]).map { $0.hidden() },
        positionalName: "ROLE",
        discussion: "Internal: started by 'reactor-bench'. Roles: \(roles.joined(separator: ", ")).",
        hidden: true,
        program: "reactor-bench"
    )

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        guard let role = arguments.positionals.first, roles.contains(role) else {
            throw UsageError("peer: give a role: \(roles.joined(separator: ", "))")
        }
        func int(_ name: String, _ range: ClosedRange<Int> = 0...Int.max) throws -> Int { try arguments.requiredInt(name, in: range) }
        func endpoint(_ name: String = "endpoint") throws -> String {
            guard let value = arguments.string(name) else { throw UsageError("peer \(role): missing --\(name)") }
            return value
        }
        func frames() throws -> [Int] {
            let sizes = (arguments.string("frames") ?? "").split(separator: ",").compactMap { Int($0) }
            guard !sizes.isEmpty, sizes.allSatisfy({ $0 >= 0 }) else { throw UsageError("peer: --frames must be sizes like 52,10") }
            return sizes
        }
        switch role {
        case "guard":
            guardAndExec(parent: try int("parent", 1...Int(Int32.max)), command: Array(arguments.positionals.dropFirst()))
        case "raw-pub":
            return RawZMQBaseline.publish(count: try int("count", 1...Int.max), frameSizes: try frames())
        case "raw-sub":
            return RawZMQBaseline.subscribe(endpoint: try endpoint())
        case "raw-echo":
            return RawZMQBaseline.echo(replyBytes: try int("reply"))
        case "raw-client":
            let mode = try arguments.choice("mode", of: ["rtt", "pipeline"]) ?? "rtt"
            return RawZMQBaseline.client(endpoint: try endpoint(), mode: mode, count: try int("count", 1...Int.max),
                                         window: try int("window", 1...1_000_000), frameSizes: try frames())
        case "raw-chunk-server":
            return RawChunkBaseline.serve(bytes: try int("bytes", 1...Int(Int32.max) * 4))
        case "raw-chunk-client":
            return RawChunkBaseline.fetch(endpoint: try endpoint(), bytes: try int("bytes", 1...Int(Int32.max) * 4),
                                          chunkBytes: try int("chunk-bytes", 1...(64 << 20)), credit: try int("credit", 1...1_024))
        case "state-decode":
            guard let mode = try arguments.choice("mode", of: ["floor", "codable"]) else { throw UsageError("peer state-decode: --mode floor or codable") }
            return StateFloor.decodePeer(file: try endpoint("file"), mode: mode)
        case "client":
            let raw = arguments.string("workload") ?? ""
            guard let workload = BenchClientPeer.Workload(rawValue: raw) else {
                throw UsageError("peer client: unknown --workload '\(raw)'")
            }
            let options = BenchClientPeer.Options(
                endpoint: try endpoint(), workload: workload, count: try int("count", 1...Int.max), window: try int("window", 1...4_096),
                maxSeconds: try arguments.seconds("max-seconds").map { Double($0.wholeMilliseconds) / 1_000 },
                recordSamples: arguments.flag("record"), verifyField: arguments.string("verify-field"), fetchStats: arguments.flag("stats"),
                waitWorkers: try int("wait-workers"), progressEvery: try int("progress-every"),
                echoEndpoint: arguments.string("echo"), echoFrameSizes: try frames(), roundSize: try int("round", 1...1_000_000),
                clients: try int("clients", 1...100_000))
            guard options.clients == 1 || !options.recordSamples else { throw UsageError("peer client: --record needs one client identity") }
            let context = try ZMQContext()
            defer { context.terminate(timeout: .seconds(2)) }
            return try BenchClientPeer(options: options, context: context).run()
        case "clients":
            let context = try ZMQContext()
            defer { context.terminate(timeout: .seconds(2)) }
            return try BenchClientsPeer(endpoint: try endpoint(), connections: try int("connections", 1...10_000), window: try int("window", 1...100_000),
                                        count: try int("count", 1...Int.max)).run(context: context)
        case "pipeline-authority":
            return PipelineBaselineAuthority.serve(actions: try endpoint("actions"), feed: try endpoint("feed"), workers: arguments.string("workers"))
        case "pipeline-worker":
            return PipelineBaselineWorker.serve(authority: try endpoint(), capacity: try int("capacity", 1...100_000))
        case "ping":
            let context = try ZMQContext()
            defer { context.terminate(timeout: .seconds(2)) }
            let probe = try BenchPingPeer(endpoint: try endpoint(), intervalMilliseconds: UInt64(try int("interval-ms", 1...10_000)),
                                          untilAccepted: UInt64(try int("until-accepted", 1...Int.max)),
                                          untilSnapshots: UInt64(try int("until-snapshots")),
                                          timeoutSeconds: Double(try arguments.seconds("timeout")?.wholeMilliseconds ?? 60_000) / 1_000,
                                          context: context)
            return try probe.run()
        case "snapshot-sub":
            return BenchSnapshotSubscriber.run(feed: try endpoint("feed"), versions: UInt64(try int("count", 1...Int.max)),
                                               timeoutSeconds: Double(try arguments.seconds("timeout")?.wholeMilliseconds ?? 60_000) / 1_000)
        case "fetcher":
            return try await BenchFetcherPeer(endpoint: try endpoint(), versions: UInt64(try int("count", 1...Int.max)),
                                              intervalMilliseconds: UInt64(try int("interval-ms", 1...60_000)),
                                              timeoutSeconds: Double(try arguments.seconds("timeout")?.wholeMilliseconds ?? 60_000) / 1_000).run()
        case "observe":
            let options = BenchObserverPeer.Options(
                app: arguments.string("app") ?? "counter", feed: try endpoint("feed"), actions: try endpoint(),
                field: arguments.string("field") ?? "count", untilVersion: UInt64(try int("until-version")),
                record: arguments.flag("record"),
                timeoutSeconds: Double(try arguments.seconds("timeout")?.wholeMilliseconds ?? 60_000) / 1_000)
            return try await BenchObserverPeer(options: options).run()
        default:
            break
        }
        return 64
    }

    /// Arranges for SIGTERM when the bench's spawning thread ends, then replaces this process
    /// with `command` (the pid, and so `/proc/PID`, stay the same; the death signal survives exec).
    static func guardAndExec(parent: Int, command: [String]) -> Never {
        guard !command.isEmpty else {
            Output.error("peer guard: nothing to run")
            exit(64)
        }
        setParentDeathSignal(SIGTERM)
        // The program starts as from a shell: nothing blocked or ignored (the runtime's threads
        // block signals, and a mask survives exec).
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        for number in [SIGINT, SIGTERM, SIGPIPE, SIGHUP] { signal(number, SIG_DFL) }
        // The bench may have died before the request above took effect.
        if getppid() != pid_t(parent) { exit(1) }
        let argv = command.map { strdup($0) } + [nil]
        execvp(command[0], argv)
        Output.error("peer guard: cannot run \(command[0]): \(String(cString: strerror(errno)))")
        exit(127)
    }

    /// `prctl(PR_SET_PDEATHSIG, signal)`. prctl is variadic in C, which Swift cannot call, so it
    /// is called through a fixed-arity pointer (integer arguments are passed the same way).
    private static func setParentDeathSignal(_ signal: Int32) {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let symbol = dlsym(nil, "prctl") else { return }
        let prctl = unsafeBitCast(symbol, to: Prctl.self)
        let prSetPdeathsig: Int32 = 1 // <linux/prctl.h>
        _ = prctl(prSetPdeathsig, UInt(signal), 0, 0, 0)
    }
}
