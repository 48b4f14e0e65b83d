import Foundation
import MessagePack
import ReactorApps
import ReactorBus
import ReactorCore
import ReactorLog
import ReactorWire
import Synchronization
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// The feed's snapshots of a large state are encoded off the authority's loop: a snapshot goes
/// out once its bytes are back, after mutations of later versions, and each one is exactly the
/// state at the version it names, never ahead of that version's own mutation; with a journal too,
/// and with a snapshot replica, which then encodes them (and fetches).
@Suite(.spawnsProcesses) struct FeedSnapshotOffLoopTests {
    /// 40,000 entries of 100 bytes: about 4.4 MiB of MessagePack, over the 1 MiB above which
    /// feed snapshots are encoded off the loop.
    static let fills: [Catalog.Action] = (0 ..< 4).map { .fill(from: $0 * 10_000, count: 10_000, bytes: 100) }
    static let puts = 3_000

    /// Where the authority keeps its state: in memory, with a journal, or with a journal and a
    /// snapshot replica (which then encodes the feed's snapshots; a snapshot to disk every
    /// second, so that it starts within one, and disk snapshots stay light for it).
    enum Keeping: String, CaseIterable, Sendable {
        case memory, journal, replica

        func options(_ directory: String) -> [String] {
            switch self {
            case .memory: []
            case .journal: ["--data", directory]
            case .replica: ["--data", directory, "--snapshot-replica-above", "0", "--snapshot-every", "1000000", "--snapshot-interval", "1"]
            }
        }
    }

    @Test(.timeLimit(.minutes(4)), arguments: Keeping.allCases)
    func eachSnapshotOfALargeStateIsTheStateAtItsVersionAndLaterMutationsDoNotWaitForIt(keeping: Keeping) async throws {
        let directory = NSTemporaryDirectory() + "reactorbus-feed-off-loop-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A snapshot due every 250 versions, none by time; a queue deep enough for every message.
        let cluster = try await ClusterProcesses(app: "catalog", extra: [
            "--feed-snapshot-every", "250", "--feed-snapshot-interval", "off", "--feed-queue-bytes", String(1 << 30),
        ] + keeping.options(directory))
        let tap = try FeedTap(feed: cluster.endpoints.feed, topics: [FeedMessage.Topic.snapshot, FeedMessage.Topic.mutation])
        #expect(try await tap.waitUntilSubscribed())

        let context = try ZMQContext()
        defer { context.terminate(timeout: .seconds(2)) }
        let client = try ActionClient<Catalog>(configuration: ActionClientConfiguration(actionsEndpoint: cluster.endpoints.actions, timeout: .seconds(20)),
                                               logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        let actions = Self.fills + (0 ..< Self.puts).map { Catalog.Action.put(key: $0 % 500, value: "v\($0)") }
        // Sent from another task while this one reads the feed (which stops early if sending fails).
        let failed = Atomic<Bool>(false)
        let sender = Task {
            do {
                for action in actions { _ = try await client.send(action) }
            } catch {
                failed.store(true, ordering: .relaxed)
                throw error
            }
        }
        let last = UInt64(actions.count)
        let read = try await tap.read(timeout: .seconds(180)) { messages in
            failed.load(ordering: .relaxed) || messages.contains { if case .mutation(let version, _, _, _) = $0 { version == last } else { false } }
        }
        let sent = await sender.result
        // Fetched after the last ack (from the replica where one encodes the state): the state
        // after every action, never an older one.
        let fetched = try await client.snapshot()
        client.close()
        await cluster.stop()
        if case .failure(let error) = sent { Issue.record("sending failed: \(error)\(cluster.authority.diagnostics)") }
        #expect(read && !failed.load(ordering: .relaxed), "the feed stopped before version \(last)\(cluster.authority.diagnostics)")

        // The first large snapshot lowers the feed's high-water mark, and the feed is bound
        // again for it: the tap reconnects and loses what was published meanwhile. From the
        // first snapshot after which it has every mutation, it has every one once, in order.
        let mutations = tap.mutations
        var snapshots: [(version: UInt64, actionSeq: UInt64, bytes: [UInt8], index: Int)] = []
        for (index, message) in tap.messages.enumerated() {
            if case .snapshot(let version, let actionSeq, let payload) = message { snapshots.append((version, actionSeq, payload, index)) }
        }
        snapshots.sort { $0.version < $1.version }
        let base = try #require(snapshots.first { snapshot in
            mutations.filter { $0.version > snapshot.version }.map(\.version) == Array(snapshot.version + 1 ... last)
        }, "no snapshot followed by every mutation: snapshots at \(snapshots.map(\.version)), \(mutations.count) mutations\(cluster.authority.diagnostics)")
        let checked = snapshots.filter { $0.version > base.version }
        #expect(checked.count >= 2, "snapshots at \(snapshots.map(\.version)) (from \(base.version) on)\(cluster.authority.diagnostics)")

        // Encoded off the loop: some snapshot left after a mutation of a later version.
        let overtaken = checked.filter { snapshot in
            tap.messages[..<snapshot.index].contains { if case .mutation(let version, _, _, _) = $0 { version > snapshot.version } else { false } }
        }
        #expect(!overtaken.isEmpty, "every snapshot left right after its own version's mutations: \(checked.map(\.version))")
        let log = (try? String(contentsOfFile: cluster.authority.logPath, encoding: .utf8)) ?? ""
        #expect(log.contains("is encoded by the snapshot replica") == (keeping == .replica), "\(cluster.authority.diagnostics)")
        // And never before the mutation of its own version (with a journal, both wait for it).
        for snapshot in checked {
            let own = tap.messages.firstIndex { if case .mutation(let version, _, _, _) = $0 { version == snapshot.version } else { false } }
            #expect(own.map { $0 < snapshot.index } == true, "the snapshot at \(snapshot.version) came before its mutation")
        }

        // Each snapshot is the state after exactly the mutations up to its version.
        let reactor = Catalog()
        let decoder = MessagePackDecoder()
        var state = try decoder.decode(Catalog.State.self, from: base.bytes)
        var following = mutations.filter { $0.version > base.version }[...]
        for snapshot in checked {
            while let mutation = following.first, mutation.version <= snapshot.version {
                reactor.reduce(state: &state, mutation: try decoder.decode(Catalog.Mutation.self, from: mutation.payload))
                following = following.dropFirst()
            }
            #expect(snapshot.actionSeq == snapshot.version)
            #expect(try decoder.decode(Catalog.State.self, from: snapshot.bytes) == state, "the snapshot at version \(snapshot.version)")
        }
        for mutation in following { reactor.reduce(state: &state, mutation: try decoder.decode(Catalog.Mutation.self, from: mutation.payload)) }
        #expect(fetched.version == last && fetched.state == state, "fetched version \(fetched.version) after the ack of \(last)")
    }
}
