import Foundation
import MessagePack
import TestSupport

/// The end of the state phase: how long the authority's loop stops while snapshots of the
/// largest state are written. The state phase's largest data directory (its final snapshot
/// written at stop) is copied twice; on each copy an authority restarts, recovers, and takes
/// the state phase's `put` mix (``Catalog/benchMix``) with a snapshot due every tenth of its
/// puts (20,000 records in a full run; and every second), while the ping probe (``BenchPingPeer``) keeps one `ping` in flight every
/// 2 ms: once with the snapshots taken from the loop's own state (`--snapshot-replica-above
/// off`: each makes the loop copy the whole state at its next change), once written from a
/// snapshot replica (`--snapshot-replica-above 0`).
///
/// Then twice more with three times the puts, no disk snapshot during the load, and a
/// subscriber to the feed's snapshots (one due every eighth of the puts, skipped while the one
/// before is still being encoded): each copied and encoded off the loop, then encoded by a
/// snapshot replica. Then twice more the same with a client fetching the whole state again and
/// again instead (``BenchFetcherPeer``, ``fetchPauseMilliseconds(stateBytes:)`` between two), as late joiners and
/// reconnecting observers do: each fetch copied and encoded off the loop, then encoded by a
/// snapshot replica.
///
/// Figures: for each, ping p50/p99/max (max = the loop's longest pause), pings over 50 ms,
/// snapshots written (or feed snapshots received, or fetches made, during the load) and
/// actions/s; the ratios of the longest pauses, replica / the loop's own (target <= 0.5x each).
/// Check: every action acked, and at least two snapshots written (or feed snapshots received,
/// or fetches made during the load; one with `--quick`, whose load is short) in each run.
enum StatePausePhase {
    /// What makes the authority encode its state during a restart's load.
    enum Load: String, Sendable {
        /// Disk snapshots, every `EVERY` records.
        case disk
        /// A subscriber to the feed's snapshots (no disk snapshot during the load).
        case feed
        /// A client fetching the whole state again and again (no disk snapshot during the load).
        case fetch
    }

    /// One restart of the largest state: what makes it encode its state, and whether a snapshot
    /// replica does it rather than the loop's own state.
    struct Variant {
        var replica: Bool
        var load: Load
        var feed: Bool { load == .feed }
        var fetch: Bool { load == .fetch }
        /// Names the run's data copy, authority and check.
        var label: String
        /// What the run does (`EVERY`: the records between two disk snapshots).
        var description: String
    }

    static let variants = [
        Variant(replica: false, load: .disk, label: "checkpoints", description: "a snapshot every EVERY records from the loop's checkpoints"),
        Variant(replica: true, load: .disk, label: "replica", description: "a snapshot every EVERY records from a snapshot replica"),
        Variant(replica: false, load: .feed, label: "feed-copy",
                description: "a feed subscriber to snapshots (one due every eighth of the puts), each copied and encoded off the loop"),
        Variant(replica: true, load: .feed, label: "feed-replica",
                description: "a feed subscriber to snapshots (one due every eighth of the puts), each encoded by a snapshot replica"),
        Variant(replica: false, load: .fetch, label: "fetch-copy",
                description: "a client fetching the whole state again and again, each fetch copied and encoded off the loop"),
        Variant(replica: true, load: .fetch, label: "fetch-replica",
                description: "a client fetching the whole state again and again, each fetch encoded by a snapshot replica"),
    ]

    /// The fetcher's pause between two fetches: 1 ms per 512 KiB of state (128 ms for 64 MiB,
    /// where a fetch takes 0.5-0.9 s), so that a small state's short load sees fetches too.
    static func fetchPauseMilliseconds(stateBytes: Int) -> Int {
        min(200, max(1, stateBytes >> 19))
    }

    static func run(directory: String, stateBytes: Int, plan: BenchPlan, results: inout BenchResults) async throws {
        let count = plan.stateActions
        // 20,000 for the full run's 200,000 puts: about ten snapshots due during the load.
        let every = max(count / 10, 100)
        for variant in variants {
            // Feed and fetch runs take three times the puts: a snapshot of the largest state
            // takes about 0.4 s to encode, and the disk runs' load is over in about a second.
            let count = variant.load == .disk ? count : count * 3
            let label = variant.label
            Output.error("bench: state — restarted on the \(stateBytes.grouped)-byte state, \(count.grouped) puts, \(variant.description.replacingOccurrences(of: "EVERY", with: every.grouped)), ping every 2 ms")
            let copy = directory + "-" + label
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: directory, toPath: copy)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            // Feed and fetch runs: no disk snapshot during the load (the replica starts from the one recovered).
            let noDisk = ["--snapshot-every", "1000000000", "--snapshot-interval", "86400"]
            let disk = switch variant.load {
            case .disk: ["--snapshot-every", String(every), "--snapshot-interval", "1"]
            case .feed: noDisk + ["--feed-snapshot-every", String(max(count / 8, 1)), "--feed-snapshot-interval", "off"]
            case .fetch: noDisk
            }
            let cluster = try await BenchCluster.authority(
                app: "catalog",
                extra: ["--data", copy, "--snapshot-replica-above", variant.replica ? "0" : "off"] + disk,
                name: "authority-state-pauses-\(label)")
            let limit = BenchPlan.limit(count, minimumRate: 1_000, base: 60)
            let (sent, probed, subscribed) = try await cluster.run { cluster in
                var subscriber: ChildProcess?
                if variant.load != .disk {
                    let timeout = ["--timeout", String(limit.wholeMilliseconds / 1_000)]
                    let peer = variant.feed
                        ? try cluster.peer(["snapshot-sub", "--feed", cluster.endpoints.feed, "--count", String(count)] + timeout, name: "snapshot-sub")
                        : try cluster.peer(["fetcher", "--endpoint", cluster.endpoints.actions, "--count", String(count),
                                            "--interval-ms", String(fetchPauseMilliseconds(stateBytes: stateBytes))] + timeout, name: "fetcher")
                    guard await peer.waitForEvent("ready", timeout: .seconds(30)) != nil else {
                        throw BenchError.phase("the \(peer.name) never heard the authority\n\(peer.logTail())\n\(cluster.authority.logTail())")
                    }
                    subscriber = peer
                }
                let probe = try cluster.peer(["ping", "--endpoint", cluster.endpoints.actions, "--interval-ms", "2", "--until-accepted", String(count),
                                              "--until-snapshots", variant.load == .disk ? "2" : "0", "--timeout", String(limit.wholeMilliseconds / 1_000)], name: "ping")
                let client = try cluster.client(workload: "catalog", count: count, window: plan.window, extra: ["--stats"])
                let sent = try await cluster.result(of: client, timeout: limit)
                let probed = try await cluster.result(of: probe, timeout: limit)
                var subscribed: MessagePackValue?
                if let subscriber { subscribed = try await cluster.result(of: subscriber, timeout: limit) }
                return (sent, probed, subscribed)
            }
            let run = BenchResults.Pause(probed: probed, sent: sent, actions: count, snapshotEvery: variant.load == .disk ? every : nil)
            // Those published (or fetched) while the puts ran (not the one at the start, nor the final one).
            let during = Int(subscribed?["during_load"]?.intValue ?? 0)
            let fetches = variant.fetch ? (during, subscribed?["longest_ms"]?.doubleValue ?? 0) : nil
            // The quick run's load lasts a quarter of a second: on a loaded machine (the test
            // suite's) one fetch of the replica's, at nice +10, can take longer than that.
            let minimum = plan.quick ? 1 : 2
            results.statePauses.append(.init(replica: variant.replica, load: variant.load, feedSnapshots: variant.feed ? during : 0, fetches: fetches, run: run))
            if variant.fetch {
                // Where the fetches' encodings were made, from the authority's counters at the end
                // of the load: all by the replica, or all from a copy of the loop's state.
                let (byReplica, offLoop) = (Int(probed["stats"]?["state_encodes_by_replica"]?.intValue ?? 0),
                                            Int(probed["stats"]?["state_encodes_off_loop"]?.intValue ?? 0))
                let encodedWhereSaid = variant.replica ? byReplica >= during && offLoop == 0 : offLoop >= during && byReplica == 0
                results.check("state_pauses_\(label)",
                              "state pauses, fetches \(variant.replica ? "from a replica" : "copied"): every action acked, at least \(minimum) fetch\(minimum == 1 ? "" : "es") during the load, "
                                + (variant.replica ? "every one encoded by the replica" : "every one encoded from a copy of the loop's state"),
                              run.acked == count && sent["errors"]?.intValue == 0 && during >= minimum && encodedWhereSaid)
            } else if variant.feed {
                results.check("state_pauses_\(label)", "state pauses, feed snapshots \(variant.replica ? "from a replica" : "copied"): every action acked, at least \(minimum) feed snapshot\(minimum == 1 ? "" : "s") received during the load",
                              run.acked == count && sent["errors"]?.intValue == 0 && during >= minimum)
            } else {
                results.check("state_pauses_\(label)", "state pauses, snapshots from \(label): every action acked, at least 2 snapshots written",
                              run.acked == count && sent["errors"]?.intValue == 0 && run.snapshotsWritten >= 2)
            }
            let made = variant.fetch ? "\(during) fetches during the load" : variant.feed ? "\(during) feed snapshots" : "\(run.snapshotsWritten) snapshots"
            Output.error("bench:   ping p50 \(run.rtt.p50) µs p99 \(run.rtt.p99) µs max \(run.rtt.max) µs (\(run.over50ms) over 50 ms), \(made), \(Int(run.ackedPerSecond).grouped) acked/s")
        }
    }
}
