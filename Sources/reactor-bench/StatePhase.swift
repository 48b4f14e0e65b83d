import Foundation
import MessagePack
import ReactorApps
import TestSupport

/// The state phase (after the snapshot phase): what the state's size costs. The `catalog` app is grown to about 1 KiB, 1 MiB and
/// 64 MiB (`--quick`: 16 MiB), each on a fresh journaling authority (`--data`, `--fsync batch`,
/// the defaults otherwise), and then takes the same mix of small `put` actions
/// (``Catalog/benchMix``) while an observer that reduces the feed's mutations itself
/// (`Observer(reactor:)`) follows it to the final version.
///
/// Figures: actions/s at each size, and their ratio largest / smallest (target >= 0.8x: the cost
/// of an action should not grow with the state); for the largest state, a late-joining
/// observer's time from `start()` to its first state (the chunked fetch, and the decode into the
/// app's `State`), against copying the same number of bytes through one DEALER/ROUTER pair in
/// 1 MiB chunks with 4 outstanding (``RawChunkBaseline``), in the same run (target <= 2x), and
/// against the floor: that copy plus building the same state from the same bytes with msgpack-c
/// and no `Codable` (``StateFloor``, target <= 2x).
/// Then the loop's pauses while the largest state is snapshotted, published or fetched (``StatePausePhase``).
/// Check: at every size the observer's final version, entry count and digest equal what reducing
/// the same actions here gives, with every action acked.
enum StatePhase {
    static func run(plan: BenchPlan, results: inout BenchResults) async throws {
        let count = plan.stateActions
        for (index, size) in plan.stateSizes.enumerated() {
            let grow = Catalog.benchFills(toAbout: size)
            Output.error("bench: state — catalog of about \(size.grouped) bytes, then \(count.grouped) put actions, journaling, one observer applying mutations")
            let expected = Catalog.benchExpected(grow: grow, count: count)
            let encoded = try MessagePackEncoder().encode(expected)
            let stateBytes = encoded.count
            let directory = BenchPaths.temporaryFile("data-state-\(size)")
            let cluster = try await BenchCluster.authority(app: "catalog", extra: ["--data", directory], name: "authority-state-\(size)")
            let isLargest = index == plan.stateSizes.count - 1
            let limit = BenchPlan.limit(count, minimumRate: 1_000, base: 60)
            let (sent, seen, joiner) = try await cluster.run { cluster in
                try await self.grow(cluster, with: grow)
                let observer = try await cluster.observer(field: "-", untilVersion: grow.count + count, timeout: limit)
                let client = try cluster.client(workload: "catalog", count: count, window: plan.window, extra: ["--stats"])
                let sent = try await cluster.result(of: client, timeout: limit)
                let seen = try await cluster.result(of: observer, timeout: limit)
                // A late joiner on the largest state: its time to the first state.
                var joiner: MessagePackValue?
                if isLargest {
                    let late = try cluster.peer(["observe", "--app", "catalog", "--feed", cluster.endpoints.feed, "--endpoint", cluster.endpoints.actions,
                                                 "--until-version", "0", "--timeout", "120"], name: "late-observer")
                    joiner = try await cluster.result(of: late, timeout: .seconds(150))
                }
                return (sent, seen, joiner)
            }
            let run = BenchResults.StateRun(
                targetBytes: size, stateBytes: stateBytes, entries: expected.entries.count, actions: count,
                acked: Int(sent["acked"]?.intValue ?? 0), ackedPerSecond: sent["per_second"]?.doubleValue ?? 0,
                snapshotsWritten: Int(sent["stats"]?["snapshots_written"]?.intValue ?? 0),
                lateJoinSeconds: joiner?["first_state_ns"]?.intValue.map { Double($0) / 1e9 })
            results.state.append(run)
            let exact = run.acked == count && sent["errors"]?.intValue == 0 && seen["version"]?.intValue == Int64(grow.count + count)
                && seen["entries"]?.intValue == Int64(expected.entries.count) && seen["digest"]?.stringValue == String(expected.benchDigest, radix: 16)
            results.check("state_\(size)_exact", "state \(size.grouped) B: the observer's final state equals the actions' (version, entries, digest)", exact)
            if let joiner {
                results.check("state_late_joiner_exact", "state: the late joiner's first state is the final one",
                              joiner["version"]?.intValue == Int64(grow.count + count) && joiner["digest"]?.stringValue == String(expected.benchDigest, radix: 16))
            }
            Output.error("bench:   \(stateBytes.grouped)-byte state: \(Int(run.ackedPerSecond).grouped) actions/s, \(run.snapshotsWritten) snapshots written"
                         + (run.lateJoinSeconds.map { String(format: ", late joiner's first state in %.3f s", $0) } ?? ""))
            if isLargest {
                results.stateRawCopySeconds = try await rawCopy(bytes: stateBytes)
                Output.error("bench:   raw copy of \(stateBytes.grouped) bytes in 1 MiB chunks: \(String(format: "%.3f", results.stateRawCopySeconds ?? 0)) s")
                let floor = try await StateFloor.measure(bytes: encoded, expected: expected)
                results.stateFloorBuildSeconds = floor.build
                (results.stateCodableDecodeSeconds, results.stateCodableEncodeSeconds) = (floor.codableDecode, floor.codableEncode)
                Output.error("bench:   floor: the same bytes unpacked by msgpack-c into a [Int: String] of \(expected.entries.count.grouped) entries, no Codable: "
                             + String(format: "%.3f s; through Codable: decode %.3f s, encode %.3f s (medians of 3 fresh processes each)",
                                      floor.build, floor.codableDecode, floor.codableEncode))
                try await StatePausePhase.run(directory: directory, stateBytes: stateBytes, plan: plan, results: &results)
            }
        }
    }

    /// Grows the catalog with `reactor-node send`, which waits for every ack.
    private static func grow(_ cluster: BenchCluster, with fills: [Catalog.Action]) async throws {
        let json = try fills.map { action -> String in
            guard case .fill(let from, let count, let bytes) = action else { throw BenchError.phase("only fills grow the catalog") }
            return "{\"fill\":{\"from\":\(from),\"count\":\(count),\"bytes\":\(bytes)}}"
        }
        let send = try cluster.node(["send", "--app", "catalog", "--actions", cluster.endpoints.actions, "--timeout", "60", "--concurrency", "1"] + json,
                                        name: "grow")
        let status = await send.waitForExit(timeout: .seconds(180))
        guard status == 0 else { throw BenchError.phase("growing the catalog failed (exit \(status.map(String.init) ?? "none"))\n\(send.logTail())") }
    }

    /// Seconds to copy `bytes` through a raw DEALER/ROUTER pair in 1 MiB chunks, 4 outstanding.
    private static func rawCopy(bytes: Int) async throws -> Double {
        let server = try ChildProcess.peer(["raw-chunk-server", "--bytes", String(bytes)], name: "raw-chunk-server")
        return try await BaselinePhase.withChildren([server]) {
            guard let endpoint = await server.waitForEvent("ready", timeout: .seconds(20))?["endpoint"]?.stringValue else {
                throw BenchError.phase("raw-chunk-server did not bind\n\(server.logTail())")
            }
            let client = try ChildProcess.peer(["raw-chunk-client", "--endpoint", endpoint, "--bytes", String(bytes), "--chunk-bytes", String(1 << 20),
                                                "--credit", "4"], name: "raw-chunk-client")
            return try await BaselinePhase.withChildren([client]) {
                guard let result = await client.waitForEvent("result", timeout: .seconds(60)), let seconds = result["seconds"]?.doubleValue else {
                    throw BenchError.phase("raw-chunk-client: no result\n\(client.logTail())")
                }
                return seconds
            }
        }
    }
}
