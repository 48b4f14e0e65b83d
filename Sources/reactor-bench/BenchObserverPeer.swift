import ArgumentParsing
import MessagePack
import ReactorApps
import ReactorBus
import ReactorCore
import ReactorLog
import Synchronization
import ZeroMQ

/// The bench's observer role: follows an authority's feed with the real ``Observer`` until the
/// state reaches a version, then reports when it got there and what the state says.
///
/// Prints `ready` once the first snapshot arrived (the bench starts its client only then), and
/// one `result`: the time the target version was seen (monotonic, comparable with the client's
/// times), the chosen field of that state (the bench's correctness check), how many snapshots
/// and bytes it received, and with `record` every `[version, seen_ns]` pair for the latency phase.
struct BenchObserverPeer {
    /// What to follow and until when.
    struct Options: Sendable {
        var app: String
        var feed: String
        var actions: String
        /// A top-level integer field of the state to report (`count`, `adjustments`).
        var field: String
        var untilVersion: UInt64
        var record: Bool
        var timeoutSeconds: Double
    }

    let options: Options

    /// Runs the role; the exit code of the process.
    func run() async throws -> Int32 {
        // The apps the bench's phases follow.
        switch options.app {
        case "counter": try await follow(Counter.self)
        case "inventory": try await follow(Inventory.self)
        case "catalog": try await followCatalog()
        default: throw UsageError("peer observe: the bench follows counter, inventory or catalog, not '\(options.app)'")
        }
    }

    private func follow<R: Reactor>(_ reactor: R.Type) async throws -> Int32 {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let configuration = ObserverConfiguration(feedEndpoint: options.feed, actionsEndpoint: options.actions, streamBufferSize: 4_096)
        let observer = try Observer<R>(configuration: configuration, logger: Logger(label: "bench observer", level: .warning), context: context)
        let stream = observer.rawSnapshots()
        let timedOut = Atomic<Bool>(false)
        let timeout = options.timeoutSeconds
        let watchdog = Task {
            try? await Task.sleep(for: .milliseconds(Int64(timeout * 1_000)))
            if !Task.isCancelled {
                timedOut.store(true, ordering: .relaxed)
                observer.stop()
            }
        }
        try observer.start()
        var snapshots = 0
        var bytes = 0
        var last: (version: UInt64, payload: [UInt8])?
        var reachedAt: UInt64?
        var seen: [MessagePackValue] = []
        for await snapshot in stream {
            let now = MonotonicClock.nanoseconds()
            if snapshots == 0 {
                Output.line(MessagePackValue.object([("event", "ready"), ("version", .whole(snapshot.version))]).rendered)
            }
            snapshots += 1
            bytes += snapshot.payload.count
            last = (snapshot.version, snapshot.payload)
            if options.record { seen.append(.array([.whole(snapshot.version), .whole(now)])) }
            if snapshot.version >= options.untilVersion {
                reachedAt = now
                break
            }
        }
        watchdog.cancel()
        observer.stop()
        await observer.wait()
        var result: [(String, MessagePackValue)] = [
            ("event", "result"), ("reached", .bool(reachedAt != nil)), ("timed_out", .bool(timedOut.load(ordering: .relaxed))),
            ("reached_ns", reachedAt.map(MessagePackValue.whole) ?? .nil), ("version", last.map { .whole($0.version) } ?? .nil),
            ("field", last.flatMap { BenchClientPeer.field(options.field, of: $0.payload) }.map(MessagePackValue.whole) ?? .nil),
            ("snapshots", .whole(snapshots)), ("bytes", .whole(bytes)),
            ("state_bytes", last.map { .whole($0.payload.count) } ?? .nil),
        ]
        let metrics = observer.metrics
        result += [("refetches", .whole(metrics.refetches)), ("stale", .whole(metrics.staleIgnored))]
        if options.record { result.append(("seen", .array(seen))) }
        Output.line(MessagePackValue.object(result).rendered)
        return reachedAt == nil ? 1 : 0
    }

    /// The catalog, followed as a late joiner would: ``Observer/init(reactor:configuration:logger:context:)``
    /// fetches the state in chunks, then applies the feed's mutations itself. Reports how long the
    /// first state took from `start()` (`first_state_ns`), and the final state's size in entries and
    /// its ``Catalog/State/benchDigest`` (the state phase's check).
    private func followCatalog() async throws -> Int32 {
        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let configuration = ObserverConfiguration(feedEndpoint: options.feed, actionsEndpoint: options.actions, streamBufferSize: 4_096)
        let observer = try Observer<Catalog>(reactor: Catalog(), configuration: configuration, logger: Logger(label: "bench observer", level: .warning),
                                             context: context)
        let stream = observer.snapshots()
        let timedOut = Atomic<Bool>(false)
        let timeout = options.timeoutSeconds
        let watchdog = Task {
            try? await Task.sleep(for: .milliseconds(Int64(timeout * 1_000)))
            if !Task.isCancelled {
                timedOut.store(true, ordering: .relaxed)
                observer.stop()
            }
        }
        let started = MonotonicClock.nanoseconds()
        try observer.start()
        var snapshots = 0
        var firstState: UInt64?
        var last: (version: UInt64, state: Catalog.State)?
        var reachedAt: UInt64?
        for await snapshot in stream {
            let now = MonotonicClock.nanoseconds()
            if firstState == nil {
                firstState = now - started
                Output.line(MessagePackValue.object([("event", "ready"), ("version", .whole(snapshot.version)), ("first_state_ns", .whole(now - started))]).rendered)
            }
            snapshots += 1
            last = (snapshot.version, snapshot.state)
            if snapshot.version >= options.untilVersion {
                reachedAt = now
                break
            }
        }
        watchdog.cancel()
        observer.stop()
        await observer.wait()
        let metrics = observer.metrics
        let result: [(String, MessagePackValue)] = [
            ("event", "result"), ("reached", .bool(reachedAt != nil)), ("timed_out", .bool(timedOut.load(ordering: .relaxed))),
            ("reached_ns", reachedAt.map(MessagePackValue.whole) ?? .nil), ("version", last.map { .whole($0.version) } ?? .nil),
            ("first_state_ns", firstState.map(MessagePackValue.whole) ?? .nil), ("snapshots", .whole(snapshots)),
            ("entries", last.map { .whole($0.state.entries.count) } ?? .nil), ("fills", last.map { .whole($0.state.fills) } ?? .nil),
            ("digest", last.map { .string(String($0.state.benchDigest, radix: 16)) } ?? .nil),
            ("refetches", .whole(metrics.refetches)), ("stale", .whole(metrics.staleIgnored)),
        ]
        Output.line(MessagePackValue.object(result).rendered)
        return reachedAt == nil ? 1 : 0
    }
}
