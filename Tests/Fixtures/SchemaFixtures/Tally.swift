import MessagePack
import ReactorBus
import ReactorCore

/// Two releases of one small app, "tally", for the schema-evolution tests: release 2 renamed
/// the state's `count` to `total`, added a `label`, and gave `added` a labelled amount, so
/// release 1's bytes no longer decode with release 2's types without ``TallyV2/schema``'s migration.
///
/// Release 1: actions `{"add":{"_0":N}}` (sync) and `{"addLater":{"_0":N}}` (an effect that emits
/// `added(N)` on a worker); state `{"count": N}`.
public struct TallyV1: Reactor {
    public enum Action: Codable, Sendable, Equatable {
        case add(Int)
        case addLater(Int)
    }
    public enum Mutation: Codable, Sendable, Equatable {
        case added(Int)
    }
    public enum Effect: Codable, Sendable, Equatable {
        case later(Int)
    }
    public struct State: Codable, Sendable, Equatable {
        public var count: Int
        public init(count: Int = 0) { self.count = count }
    }

    public init() {}
    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .add(let n): [.added(n)]
        case .addLater(let n): Mutations(async: .later(n))
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .added(let n): state.count += n
        }
    }

    /// Release 1 declares nothing: schema version 1.
    public static let schema = AppSchema()
}

/// Release 2 of "tally" (schema version 2): state `{"total": N, "label": "..."}`, mutation
/// `{"added":{"amount":N}}`; actions and effects keep their shape.
public struct TallyV2: Reactor {
    public enum Action: Codable, Sendable, Equatable {
        case add(Int)
        case addLater(Int)
    }
    public enum Mutation: Codable, Sendable, Equatable {
        case added(amount: Int)
    }
    public enum Effect: Codable, Sendable, Equatable {
        case later(Int)
    }
    public struct State: Codable, Sendable, Equatable {
        public var total: Int
        public var label: String
        public init(total: Int = 0, label: String = "tally") {
            self.total = total
            self.label = label
        }
    }

    public init() {}
    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .add(let n): [.added(amount: n)]
        case .addLater(let n): Mutations(async: .later(n))
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .added(let n): state.total += n
        }
    }

    /// Schema 2, reading release 1's data: `count` becomes `total` (with the default label),
    /// `added`'s unlabelled amount (`_0`) becomes `amount`.
    public static let schema = AppSchema(version: 2, migrations: [
        SchemaMigration(from: 1, state: { old in
            guard let count = old["count"] else { throw TallyMigrationError.missing("count") }
            return .map([(.string("total"), count), (.string("label"), .string("tally"))])
        }, mutation: { old in
            guard let amount = old["added"]?["_0"] else { throw TallyMigrationError.missing("added._0") }
            return .map([(.string("added"), .map([(.string("amount"), amount)]))])
        }),
    ])
}

/// A release 1 value without the field a migration needs.
public enum TallyMigrationError: Error, Equatable {
    case missing(String)
}

/// Runs both releases' one effect: emits the amount.
public struct TallyEffectsV1: EffectHandler {
    public init() {}
    public func run(_ effect: TallyV1.Effect, emit: Emitter<TallyV1.Mutation>) async throws {
        if case .later(let n) = effect { await emit(.added(n)) }
    }
}

public struct TallyEffectsV2: EffectHandler {
    public init() {}
    public func run(_ effect: TallyV2.Effect, emit: Emitter<TallyV2.Mutation>) async throws {
        if case .later(let n) = effect { await emit(.added(amount: n)) }
    }
}
