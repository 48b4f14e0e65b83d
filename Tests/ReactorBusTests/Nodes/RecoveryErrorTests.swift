import Foundation
import MessagePack
import ReactorApps
import ReactorCore
import ReactorLog
import ReactorWire
import Testing
@testable import ReactorBus

/// A data directory written by one shape of the app and opened by another: a clear refusal that
/// names the type, the field and the file, never a `DecodingError` dump.
@Suite struct RecoveryErrorTests {
    /// The counter after a release that added a required field to its state.
    struct LabelledCounter: Reactor {
        enum Action: Codable, Sendable, Equatable { case countUp, countUpAsync }
        enum Mutation: Codable, Sendable, Equatable { case increase }
        enum Effect: Codable, Sendable, Equatable { case slowIncrease }
        struct State: Codable, Sendable, Equatable { var count = 0; var label = "" }
        var initialState: State { State() }
        func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> { [.increase] }
        func reduce(state: inout State, mutation: Mutation) { state.count += 1 }
    }

    /// The counter after a release that renamed an action.
    struct RenamedCounter: Reactor {
        enum Action: Codable, Sendable, Equatable { case increment }
        enum Mutation: Codable, Sendable, Equatable { case increase }
        enum Effect: Codable, Sendable, Equatable { case slowIncrease }
        struct State: Codable, Sendable, Equatable { var count = 0 }
        var initialState: State { State() }
        func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> { [.increase] }
        func reduce(state: inout State, mutation: Mutation) { state.count += 1 }
    }

    let directory = try! TemporaryDirectory()
    let logger = Logger(label: "test", sink: .discard)

    func configuration() -> (AuthorityConfiguration, PersistenceConfiguration) {
        var configuration = AuthorityConfiguration(appName: "counter", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
        let persistence = PersistenceConfiguration(directory: directory.path)
        configuration.persistence = persistence
        return (configuration, persistence)
    }

    /// Ten countUp actions journaled by today's counter; with `snapshot`, closed with a final snapshot.
    func writeTenActions(snapshot: Bool) throws {
        let (configuration, persistence) = configuration()
        let engine = AuthorityEngine(reactor: Counter(), configuration: configuration, logger: logger, journaling: true)
        let durability = try AuthorityDurability<Counter>(configuration: persistence, app: "counter", logger: logger)
        try durability.recover(into: engine)
        let payload = try MessagePackEncoder().encode(Counter.Action.countUp)
        for seq in 1...10 as ClosedRange<UInt64> {
            engine.handleClient([[1]] + ClientMessage.action(clientID: "c", clientSeq: seq, payload: payload).frames(HeaderWriter()), now: 0)
        }
        let outbox = engine.takeOutbox(.init(checkpointAtRecords: 0))
        try durability.append(outbox.records)
        durability.close(final: snapshot ? engine.checkpoint() : nil)
    }

    func recover<R: Reactor>(_ reactor: R) throws {
        let (configuration, persistence) = configuration()
        let engine = AuthorityEngine(reactor: reactor, configuration: configuration, logger: logger, journaling: true)
        let durability = try AuthorityDurability<R>(configuration: persistence, app: "counter", logger: logger)
        defer { durability.close(final: nil) }
        try durability.recover(into: engine)
    }

    @Test func aStateWithANewRequiredFieldNamesTheFieldAndTheSnapshot() throws {
        try writeTenActions(snapshot: true)
        #expect {
            try recover(LabelledCounter())
        } throws: { error in
            let text = "\(error)"
            return error is RecoveryError && text.hasPrefix("snapshot \(directory.snapshots)/snapshot-")
                && text.contains("the field 'label' is missing") && text.contains("decodeIfPresent") && !text.contains("DecodingError")
        }
    }

    @Test func aRenamedActionNamesTheJournalRecord() throws {
        try writeTenActions(snapshot: false)
        #expect {
            try recover(RenamedCounter())
        } throws: { error in
            let text = "\(error)"
            return error is RecoveryError && text.hasPrefix("journal record 1 does not decode with this build's types: "
                + "'countUp' is not a case of RecoveryErrorTests.RenamedCounter.Action; its cases are increment. ")
        }
    }

    @Test func theSameShapeRecovers() throws {
        try writeTenActions(snapshot: true)
        try recover(Counter())
    }
}
