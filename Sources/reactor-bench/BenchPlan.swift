import Foundation
import MessagePack
import ReactorApps

/// How much work each phase of a bench run does, and how long it may take.
///
/// The full run sends 1,000,000 actions in the sync phase and scales the others from that base
/// (1,000,000 in the memory phase too); `--quick` sends a fifth of that. The hidden options
/// `--actions`, `--messages` and `--samples` set the base counts directly, for tests.
struct BenchPlan: Sendable {
    var quick: Bool
    /// Messages of each raw throughput test (PUB->SUB, pipelined echo).
    var messages: Int
    /// Round trips of the raw RTT test and actions of the latency phase.
    var samples: Int
    var syncActions: Int
    var asyncActions: Int
    var snapshotActions: Int
    var memoryActions: Int
    /// Actions under `--fsync always`, and a time cap for them.
    var alwaysActions: Int
    var alwaysSeconds: Double
    /// Actions under `--fsync batch` and `none`.
    var durableActions: Int
    var pythonActions: Int
    /// Rounds of the failover phase (each kills an elected primary), and the actions timed
    /// with and without replication.
    var failoverRounds: Int
    var replicationActions: Int
    /// Actions of each run of the pause phase, spread over `pauseClients` client identities,
    /// with a snapshot every `pauseSnapshotEvery` journal records in the second run.
    var pauseActions: Int
    var pauseClients = 500
    /// Where the pause phase's authority keeps its snapshots (`--snapshot-dir`); `nil`: its data directory.
    var snapshotDirectory: String?
    var pauseSnapshotEvery: Int
    /// Unacked actions a client keeps in flight (and messages of the pipelined echo).
    var window = 1_000
    var workers = 2
    /// Effects each worker runs at once.
    var workerConcurrency: Int
    /// The state phase's sizes (bytes of MessagePack, about), and the actions timed at each.
    var stateSizes: [Int]
    var stateActions: Int
    /// Items in the snapshot phase's state.
    var inventoryItems = Inventory().itemCount
    /// The effects phase's effects in flight (in all), and the most actions one run sends.
    var effectsInFlight: [Int]
    var effectsMaxActions: Int
    /// The clients phase's numbers of clients, and the actions each run sends.
    var clientCounts: [Int]
    var clientsActions: Int
    /// Phases to run (all when empty).
    var only: Set<String> = []

    static let phases = ["baseline", "pipeline", "sync", "async", "effects", "clients", "latency", "snapshot", "state", "memory", "durability", "pause", "failover", "python"]

    init(quick: Bool, actions: Int?, messages: Int?, samples: Int?, workerConcurrency: Int) {
        self.quick = quick
        let base = actions ?? (quick ? 200_000 : 1_000_000)
        self.messages = messages ?? (quick ? 500_000 : 2_000_000)
        self.samples = samples ?? (quick ? 5_000 : 20_000)
        syncActions = base
        asyncActions = max(base * 2 / 5, 100)
        snapshotActions = max(base / 10, 100)
        memoryActions = actions.map { max($0, 1_000) } ?? (quick ? 200_000 : 1_000_000)
        alwaysActions = max(base / 100, 50)
        alwaysSeconds = quick ? 10 : 30
        durableActions = max(base * 2 / 5, 100)
        pythonActions = max(base / 5, 100)
        failoverRounds = base < 100_000 ? 1 : (quick ? 3 : 9)
        replicationActions = max(base / 4, 1_000)
        pauseActions = max(base, 1_000)
        pauseSnapshotEvery = max(pauseActions / 10, 100)
        stateSizes = [1 << 10, 1 << 20, quick ? 16 << 20 : 64 << 20]
        effectsInFlight = quick ? [100, 1_000] : [100, 1_000, 10_000]
        effectsMaxActions = max(base / 10, 1_000)
        clientCounts = quick ? [1, 10, 100] : [1, 10, 100, 1_000]
        clientsActions = max(base / 5, 1_000)
        stateActions = max(base / 5, 1_000)
        self.workerConcurrency = workerConcurrency
    }

    func runs(_ phase: String) -> Bool { only.isEmpty || only.contains(phase) }

    /// A time limit for a phase that moves `count` actions at no less than `minimumRate` per second.
    static func limit(_ count: Int, minimumRate: Double, base: Double = 30) -> Duration {
        .milliseconds(Int64((base + Double(count) / minimumRate) * 1_000))
    }

    var json: MessagePackValue {
        .object([
            ("quick", .bool(quick)), ("messages", .whole(messages)), ("samples", .whole(samples)), ("window", .whole(window)),
            ("sync_actions", .whole(syncActions)), ("async_actions", .whole(asyncActions)), ("workers", .whole(workers)),
            ("worker_concurrency", .whole(workerConcurrency)), ("snapshot_actions", .whole(snapshotActions)),
            ("inventory_items", .whole(inventoryItems)),
            ("state_sizes", .array(stateSizes.map { .whole($0) })), ("state_actions", .whole(stateActions)), ("memory_actions", .whole(memoryActions)),
            ("fsync_always_actions", .whole(alwaysActions)), ("fsync_always_max_seconds", .number(alwaysSeconds)),
            ("durable_actions", .whole(durableActions)), ("python_actions", .whole(pythonActions)),
            ("effects_in_flight", .array(effectsInFlight.map { .whole($0) })), ("effects_max_actions", .whole(effectsMaxActions)),
            ("client_counts", .array(clientCounts.map { .whole($0) })), ("clients_actions", .whole(clientsActions)),
            ("failover_rounds", .whole(failoverRounds)), ("replication_actions", .whole(replicationActions)),
            ("pause_actions", .whole(pauseActions)), ("pause_clients", .whole(pauseClients)), ("pause_snapshot_every", .whole(pauseSnapshotEvery)),
        ])
    }
}

/// The sizes of the messages the reactor really sends, so the raw baseline sends the same.
///
/// Encoded exactly as the bench client and the authority encode them (MessagePack headers of
/// docs/PROTOCOL.md, the counter's `countUp` payload), with sequence numbers and versions of the
/// magnitude a run reaches. The sync phase reports the sizes it measured on the wire next to these.
struct WireSizes: Sendable {
    /// The action's header frame `[1, "action", client_id, client_seq]`.
    var actionHeader: Int
    /// The action's payload frame (`{"countUp":{}}`).
    var actionPayload: Int
    /// The ack frame `[1, "ack", client_seq, action_seq, version]`.
    var ack: Int
    /// A feed snapshot of the counter: topic, header `[1, version, action_seq]`, state.
    var snapshotFrames: [Int]

    static func measure(magnitude: Int) throws -> WireSizes {
        let n = UInt64(max(magnitude, 1))
        let writer = MessagePackWriter()
        writer.packArrayHeader(4)
        writer.packUInt(1)
        writer.packString("action")
        writer.packString("bench-" + UUID().uuidString)
        writer.packUInt(n)
        let header = writer.count
        writer.reset()
        writer.packArrayHeader(5)
        writer.packUInt(1)
        writer.packString("ack")
        writer.packUInt(n)
        writer.packUInt(n)
        writer.packUInt(n)
        let ack = writer.count
        writer.reset()
        writer.packArrayHeader(3)
        writer.packUInt(1)
        writer.packUInt(n)
        writer.packUInt(n)
        let feedHeader = writer.count
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp).count
        let state = try MessagePackEncoder().encode(Counter.State(count: Int(n))).count
        return WireSizes(actionHeader: header, actionPayload: payload, ack: ack, snapshotFrames: ["snapshot".utf8.count, feedHeader, state])
    }

    var json: MessagePackValue {
        .object([
            ("action_header_bytes", .whole(actionHeader)), ("action_payload_bytes", .whole(actionPayload)),
            ("action_bytes", .whole(actionHeader + actionPayload)), ("ack_bytes", .whole(ack)),
            ("feed_snapshot_frames", .array(snapshotFrames.map { .whole($0) })),
        ])
    }
}
