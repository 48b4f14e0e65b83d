import ReactorCore

/// A dictionary of generated entries that small actions make as large as asked: the app that
/// shows what a state of many MiB costs, since its mutations stay a few bytes while the state
/// grows without bound.
///
/// JSON forms: actions `{"fill":{"from":0,"count":100000,"bytes":64}}` (entries `from..<from+count`,
/// each a string of `bytes` characters derived from its key) and `{"put":{"key":7,"value":"x"}}`;
/// state `{"fills":N,"entries":{"7":"x",...}}`, at first empty.
public struct Catalog: Reactor {
    /// The most entries one `fill` makes, and the longest entry, so one action stays bounded.
    public static let maxFillCount = 1_000_000
    public static let maxEntryBytes = 4_096

    /// What a client can ask for.
    public enum Action: Codable, Sendable, Equatable {
        /// Sets entries `from..<from+count` to generated strings of `bytes` characters.
        case fill(from: Int, count: Int, bytes: Int)
        /// Sets one entry.
        case put(key: Int, value: String)
    }

    /// The changes, one per action.
    public enum Mutation: Codable, Sendable, Equatable {
        case filled(from: Int, count: Int, bytes: Int)
        case stored(key: Int, value: String)
    }

    /// The catalog has no slow work.
    public enum Effect: Codable, Sendable, Equatable {
        case none
    }

    /// The entries by key, and how many fills were applied.
    public struct State: Codable, Sendable, Equatable {
        public var fills: Int
        public var entries: [Int: String]

        public init(fills: Int = 0, entries: [Int: String] = [:]) {
            self.fills = fills
            self.entries = entries
        }
    }

    public init() {}

    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .fill(let from, let count, let bytes): [.filled(from: from, count: count, bytes: bytes)]
        case .put(let key, let value): [.stored(key: key, value: value)]
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .filled(let from, let count, let bytes):
            state.fills += 1
            let count = min(max(0, count), Self.maxFillCount)
            let bytes = min(max(0, bytes), Self.maxEntryBytes)
            state.entries.reserveCapacity(state.entries.count + count)
            for key in from..<(from &+ count) where key >= from {
                state.entries[key] = Self.entry(key: key, bytes: bytes)
            }
        case .stored(let key, let value):
            state.entries[key] = value
        }
    }

    /// The generated entry of `key`: its decimal digits, repeated, cut to `bytes` characters.
    public static func entry(key: Int, bytes: Int) -> String {
        let digits = Array(String(key).utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes)
        while text.count < bytes { text.append(digits[text.count % digits.count]) }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The catalog's effect handler: there are no effects, so it never emits.
public struct CatalogEffects: EffectHandler {
    public init() {}

    public func run(_ effect: Catalog.Effect, emit: Emitter<Catalog.Mutation>) async throws {}
}
