import MessagePack
import ReactorCore

/// A stand-in reactor whose values stay MessagePack trees: a checkpoint written by any release of
/// an app decodes as `AuthorityCheckpoint<StoredValues>`, so a migration can reach its state,
/// effects and buffered mutations without knowing the old Swift types. Never run.
struct StoredValues: Reactor {
    typealias Action = MessagePackValue
    typealias Mutation = MessagePackValue
    typealias Effect = MessagePackValue
    typealias State = MessagePackValue

    var initialState: MessagePackValue { .nil }
    func mutate(state: MessagePackValue, action: MessagePackValue) -> Mutations<MessagePackValue, MessagePackValue> { .none }
    func reduce(state: inout MessagePackValue, mutation: MessagePackValue) {}
}
