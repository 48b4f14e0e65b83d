import Foundation
import ReactorApps
import Testing
@testable import ReactorCore

/// The sequencer's subscription rules, with the ticker app: runs start and stop with the state,
/// events are applied as actions exactly once and in order, a run that leaves and comes back is
/// a new run, and checkpoints and replay keep all of it.
@Suite struct SubscriptionSequencerTests {
    typealias Receipt = SubscriptionEventReceipt<Ticker.Mutation, Ticker.Effect>

    private func tick(_ sequencer: inout Sequencer<Ticker>, _ symbol: String, run: UInt64, index: UInt64) throws(SubscriptionEventError) -> Receipt {
        try sequencer.receive(event: .tick(symbol: symbol, n: index), index: index, run: run)
    }

    @Test func aRunStartsWhenTheStateWantsItAndStopsWhenItLeaves() throws {
        var sequencer = Sequencer(reactor: Ticker())
        #expect(sequencer.runningSubscriptions.isEmpty)
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 2))
        let started = sequencer.takeSubscriptionChanges()
        #expect(started.started == [SubscriptionRun(id: "quotes/ACME", run: 1, subscription: .quotes(symbol: "ACME"), kind: "quotes", lastAppliedEvent: nil)])
        #expect(started.stopped.isEmpty)
        #expect(sequencer.takeSubscriptionChanges().isEmpty)

        #expect(try tick(&sequencer, "ACME", run: 1, index: 0).disposition == .applied)
        #expect(sequencer.takeSubscriptionChanges().isEmpty)
        #expect(sequencer.subscriptionRun(1)?.lastAppliedEvent == 0)
        let last = try tick(&sequencer, "ACME", run: 1, index: 1)
        #expect(last.disposition == .applied)
        #expect(last.accepted.map(\.actionSeq) == [3])
        let stopped = sequencer.takeSubscriptionChanges()
        #expect(stopped.started.isEmpty)
        #expect(stopped.stopped.map(\.run) == [1])
        #expect(stopped.stopped.first?.lastAppliedEvent == 1)
        #expect(sequencer.runningSubscriptions.isEmpty)
        #expect(sequencer.state.ticks == ["ACME": [0, 1]])
        #expect(sequencer.version == 3)
    }

    @Test func duplicatesAreDroppedAndEarlyEventsWaitForTheGap() throws {
        var sequencer = Sequencer(reactor: Ticker())
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        #expect(try tick(&sequencer, "ACME", run: 1, index: 0).disposition == .applied)
        #expect(try tick(&sequencer, "ACME", run: 1, index: 0).disposition == .duplicate)
        #expect(try tick(&sequencer, "ACME", run: 1, index: 3).disposition == .buffered)
        #expect(try tick(&sequencer, "ACME", run: 1, index: 2).disposition == .buffered)
        #expect(try tick(&sequencer, "ACME", run: 1, index: 3).disposition == .duplicate)
        #expect(sequencer.state.ticks["ACME"] == [0])
        let filled = try tick(&sequencer, "ACME", run: 1, index: 1)
        #expect(filled.disposition == .applied)
        #expect(filled.accepted.map(\.actionSeq) == [3, 4, 5])
        #expect(sequencer.state.ticks["ACME"] == [0, 1, 2, 3])
        #expect(try tick(&sequencer, "ACME", run: 1, index: 2).disposition == .duplicate)
        #expect(sequencer.version == 5)
        #expect(sequencer.actionSeq == 5)
    }

    @Test func eventsTooFarAheadAndOfUnknownRunsAreRefused() throws {
        var sequencer = Sequencer(reactor: Ticker(), emitWindow: 4)
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        #expect(throws: SubscriptionEventError.eventOutOfWindow(run: 1, index: 4, window: 4)) {
            try tick(&sequencer, "ACME", run: 1, index: 4)
        }
        #expect(throws: SubscriptionEventError.unknownRun(2)) { try tick(&sequencer, "ACME", run: 2, index: 0) }
        #expect(throws: SubscriptionEventError.unknownRun(0)) { try tick(&sequencer, "ACME", run: 0, index: 0) }
        #expect(try tick(&sequencer, "ACME", run: 1, index: 3).disposition == .buffered)
        #expect(sequencer.version == 1)
        #expect(sequencer.actionSeq == 1)
    }

    @Test func leavingAndComingBackIsANewRunAndTheOldRunsEventsAreDropped() throws {
        var sequencer = Sequencer(reactor: Ticker())
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        #expect(try tick(&sequencer, "ACME", run: 1, index: 0).disposition == .applied)
        #expect(try tick(&sequencer, "ACME", run: 1, index: 2).disposition == .buffered)
        _ = sequencer.takeSubscriptionChanges()
        _ = sequencer.accept(.unfollow(symbol: "ACME"))
        #expect(sequencer.takeSubscriptionChanges().stopped.map(\.run) == [1])
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        let again = sequencer.takeSubscriptionChanges()
        #expect(again.started.map(\.run) == [2])
        #expect(again.started.first?.lastAppliedEvent == nil)
        let version = sequencer.version
        #expect(try tick(&sequencer, "ACME", run: 1, index: 1).disposition == .stale)
        #expect(sequencer.version == version)
        #expect(try tick(&sequencer, "ACME", run: 2, index: 0).disposition == .applied)
        #expect(sequencer.state.ticks["ACME"] == [0, 0])
    }

    @Test func aRunThatStartsAndStopsBeforeTheRuntimeLooksIsLeftOut() {
        var sequencer = Sequencer(reactor: Ticker())
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        _ = sequencer.accept(.unfollow(symbol: "ACME"))
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        let changes = sequencer.takeSubscriptionChanges()
        #expect(changes.started.map(\.run) == [2])
        #expect(changes.stopped.isEmpty)
    }

    @Test func bufferedEventsOfARunThatAnEventStopsAreDropped() throws {
        var sequencer = Sequencer(reactor: Ticker())
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 2))
        #expect(try tick(&sequencer, "ACME", run: 1, index: 2).disposition == .buffered)
        #expect(try tick(&sequencer, "ACME", run: 1, index: 1).disposition == .buffered)
        let receipt = try tick(&sequencer, "ACME", run: 1, index: 0)
        #expect(receipt.accepted.count == 2)
        #expect(sequencer.state.ticks["ACME"] == [0, 1])
        #expect(sequencer.runningSubscriptions.isEmpty)
        #expect(try tick(&sequencer, "ACME", run: 1, index: 2).disposition == .stale)
    }

    @Test func theInitialStatesSubscriptionsAreRunningFromTheStart() {
        let state = Ticker.State(targets: ["B": 3, "A": 3, "C": 0])
        var sequencer = Sequencer(reactor: Ticker(), state: state)
        #expect(sequencer.runningSubscriptions.map(\.id) == ["quotes/A", "quotes/B"])
        #expect(sequencer.runningSubscriptions.map(\.run) == [1, 2])
        #expect(sequencer.takeSubscriptionChanges().isEmpty)
    }

    @Test func aCheckpointKeepsRunsIndicesAndBufferedEvents() throws {
        var sequencer = Sequencer(reactor: Ticker())
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        _ = sequencer.accept(.follow(symbol: "BETA", ticks: 10))
        _ = try tick(&sequencer, "ACME", run: 1, index: 0)
        _ = try tick(&sequencer, "ACME", run: 1, index: 2)
        let bytes = try JSONEncoder().encode(sequencer.checkpoint())
        var restored = Sequencer(reactor: Ticker(), restoring: try JSONDecoder().decode(SequencerCheckpoint<Ticker>.self, from: bytes))
        #expect(restored.runningSubscriptions == sequencer.runningSubscriptions)
        #expect(restored.takeSubscriptionChanges().isEmpty)
        #expect(try tick(&restored, "ACME", run: 1, index: 0).disposition == .duplicate)
        #expect(try tick(&restored, "ACME", run: 1, index: 2).disposition == .duplicate)
        #expect(try tick(&restored, "ACME", run: 1, index: 1).accepted.count == 2)
        #expect(restored.state.ticks["ACME"] == [0, 1, 2])
        _ = restored.accept(.unfollow(symbol: "BETA"))
        _ = restored.accept(.follow(symbol: "BETA", ticks: 10))
        #expect(restored.takeSubscriptionChanges().started.map(\.run) == [3])
    }

    @Test func aCheckpointFromBeforeSubscriptionsStartsTheStatesRuns() throws {
        var sequencer = Sequencer(reactor: Ticker())
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(sequencer.checkpoint())) as? [String: Any])
        #expect(object.removeValue(forKey: "subscriptions") != nil)
        let old = try JSONDecoder().decode(SequencerCheckpoint<Ticker>.self, from: JSONSerialization.data(withJSONObject: object))
        let restored = Sequencer(reactor: Ticker(), restoring: old)
        #expect(restored.runningSubscriptions.map(\.id) == ["quotes/ACME"])
        #expect(restored.runningSubscriptions.map(\.lastAppliedEvent) == [nil])
        #expect(restored.state == sequencer.state)
    }

    /// A checkpoint converted for another release of the app keeps each run's number and applied
    /// events by id (so journal records after it still find their run); buffered events are
    /// dropped, and sent again by the handler, which resumes after the last applied one.
    @Test func aConvertedCheckpointKeepsRunsByID() throws {
        var sequencer = Sequencer(reactor: Ticker())
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        _ = sequencer.accept(.follow(symbol: "BETA", ticks: 10))
        _ = sequencer.accept(.unfollow(symbol: "ACME"))
        _ = sequencer.accept(.follow(symbol: "ACME", ticks: 10))
        _ = try tick(&sequencer, "ACME", run: 3, index: 0)
        _ = try tick(&sequencer, "ACME", run: 3, index: 1)
        _ = try tick(&sequencer, "ACME", run: 3, index: 3)
        let converted = sequencer.checkpoint().converted(to: Ticker.self, state: { $0 }, effect: { $0 }, mutation: { $0 })
        var restored = Sequencer(reactor: Ticker(), restoring: converted)
        #expect(restored.runningSubscriptions == sequencer.runningSubscriptions)
        #expect(restored.runningSubscriptions.map(\.run) == [2, 3])
        #expect(restored.subscriptionLedger.carried == nil)
        #expect(try tick(&restored, "ACME", run: 3, index: 1).disposition == .duplicate)
        #expect(try tick(&restored, "ACME", run: 3, index: 3).disposition == .buffered)
        #expect(try tick(&restored, "ACME", run: 3, index: 2).accepted.count == 2)
        _ = restored.accept(.unfollow(symbol: "BETA"))
        _ = restored.accept(.follow(symbol: "BETA", ticks: 10))
        #expect(restored.takeSubscriptionChanges().started.map(\.run) == [4])
    }

    /// The inputs of a run, replayed through a fresh sequencer, give the same state and the same
    /// subscription bookkeeping (what a journal replay relies on).
    @Test func replayingTheSameInputsReproducesStateAndRuns() throws {
        enum Input { case action(Ticker.Action), event(run: UInt64, index: UInt64, symbol: String) }
        let inputs: [Input] = [
            .action(.follow(symbol: "ACME", ticks: 4)), .action(.follow(symbol: "BETA", ticks: 9)),
            .event(run: 1, index: 1, symbol: "ACME"), .event(run: 2, index: 0, symbol: "BETA"), .event(run: 1, index: 0, symbol: "ACME"),
            .event(run: 1, index: 0, symbol: "ACME"), .action(.unfollow(symbol: "BETA")), .event(run: 2, index: 1, symbol: "BETA"),
            .action(.follow(symbol: "BETA", ticks: 9)), .event(run: 3, index: 1, symbol: "BETA"), .event(run: 1, index: 2, symbol: "ACME"),
            .event(run: 1, index: 3, symbol: "ACME"), .event(run: 1, index: 4, symbol: "ACME"),
        ]
        func run() -> Sequencer<Ticker> {
            var sequencer = Sequencer(reactor: Ticker())
            for input in inputs {
                switch input {
                case .action(let action): _ = sequencer.accept(action)
                case .event(let run, let index, let symbol): _ = try? sequencer.receive(event: .tick(symbol: symbol, n: index), index: index, run: run)
                }
            }
            return sequencer
        }
        let first = run(), second = run()
        #expect(first.state == Ticker.State(targets: ["ACME": 4, "BETA": 9], ticks: ["ACME": [0, 1, 2, 3], "BETA": [0]]))
        #expect(first.state == second.state)
        #expect(first.version == second.version)
        #expect(first.actionSeq == second.actionSeq)
        #expect(first.runningSubscriptions == second.runningSubscriptions)
        #expect(first.runningSubscriptions.map(\.run) == [3])
        #expect(first.subscriptionLedger.lastRun == second.subscriptionLedger.lastRun)
        #expect(first.subscriptionLedger.runs.mapValues { Array($0.buffered.keys) } == ["quotes/BETA": [1]])
        #expect(second.subscriptionLedger.runs.mapValues { Array($0.buffered.keys) } == ["quotes/BETA": [1]])
    }
}
