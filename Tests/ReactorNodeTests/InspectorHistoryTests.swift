import ReactorApps
import ReactorCore
@testable import ReactorNodeKit
import Testing
import TestTraits

/// The inspector's memory: bounded by its limits, exact inside its window, honest about gaps.
@Suite(.spawnsProcesses) struct InspectorHistoryTests {
    typealias History = InspectorHistory<Counter>

    func mutation(_ version: UInt64, action: UInt64, origin: MutationOrigin = .sync(index: 0)) -> History.Recorded {
        History.Recorded(version: version, actionSeq: action, origin: origin, mutation: .increase, seenAt: 0)
    }

    @Test func memoryStaysWithinTheLimitsAndEveryVersionInTheWindowIsRebuiltExactly() {
        var limits = InspectorLimits()
        limits.versions = 100
        limits.actions = 10
        limits.checkpointEvery = 10
        let history = History(reactor: Counter(), limits: limits)
        #expect(history.install(version: 0, actionSeq: 0, state: Counter.State()) == false)
        for version in UInt64(1)...1_000 {
            #expect(history.receive(mutation(version, action: version)) == false)
        }
        let summary = history.summary
        #expect(summary.version == 1_000)
        #expect(summary.oldestVersion == 900)
        #expect(summary.mutationsKept == 100)
        #expect(summary.checkpointsKept == 11)
        #expect(summary.actionsKept == 10)
        #expect(history.actions(last: 100).map(\.actionSeq) == Array((UInt64(991)...1_000).reversed()))
        for version in [UInt64(900), 901, 955, 999, 1_000] {
            #expect(history.state(at: version)?.state == Counter.State(count: Int(version)), "version \(version)")
            #expect(history.state(at: version)?.actionSeq == version)
        }
        #expect(history.state(at: 899) == nil)
        #expect(history.state(at: 1_001) == nil)
        #expect(history.action(990) == nil)
        #expect(history.action(1_000)?.sync == [1_000])
    }

    @Test func aGapInVersionsAsksForASnapshotAndTheStretchNotSeenIsNotRebuilt() {
        let history = History(reactor: Counter(), limits: InspectorLimits())
        // Mutations before the first snapshot wait for it; older ones are dropped.
        #expect(history.receive(mutation(1, action: 1)) == false)
        #expect(history.install(version: 0, actionSeq: 0, state: Counter.State()) == false)
        #expect(history.receive(mutation(2, action: 2)) == false)
        #expect(history.current?.state == Counter.State(count: 2))
        // Version 5 after 2: fetch again; 6 waits for the snapshot (at 5), then applies.
        #expect(history.receive(mutation(5, action: 4, origin: .async(job: JobID(actionSeq: 4, effectIndex: 0), emitIndex: 0))) == true)
        #expect(history.receive(mutation(6, action: 5)) == false)
        #expect(history.summary.awaitingSnapshot)
        #expect(history.install(version: 5, actionSeq: 5, state: Counter.State(count: 5)) == false)
        #expect(history.current?.version == 6)
        #expect(history.current?.state == Counter.State(count: 6))
        #expect(history.summary.refetches == 1)
        #expect(history.state(at: 2)?.state == Counter.State(count: 2))
        #expect(history.state(at: 3) == nil)
        #expect(history.state(at: 4) == nil)
        #expect(history.state(at: 5)?.state == Counter.State(count: 5))
        #expect(history.state(at: 6)?.state == Counter.State(count: 6))
        // Two heartbeats in a row ahead of the state held: lost feed messages, fetch again.
        #expect(history.heartbeat(version: 6, actionSeq: 5) == false)
        #expect(history.heartbeat(version: 7, actionSeq: 6) == false)
        #expect(history.heartbeat(version: 7, actionSeq: 6) == true)
        #expect(history.summary.refetches == 2)
    }

    @Test func theDiffNamesEachChangedLeafWithItsPath() {
        let before = InspectorRoutes<Counter>.value(["a": [1, 2], "b": [3]])
        let after = InspectorRoutes<Counter>.value(["a": [1, 5, 6], "c": [7]])
        let changes = JSONDiff.changes(from: before, to: after).map { "\($0.path): \($0.before?.jsonText() ?? "-") -> \($0.after?.jsonText() ?? "-")" }
        #expect(changes == ["a[1]: 2 -> 5", "a[2]: - -> 6", "b: [3] -> -", "c: - -> [7]"])
        #expect(JSONDiff.changes(from: before, to: before).isEmpty)
    }
}
