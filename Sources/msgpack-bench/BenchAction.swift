/// A small action as apps declare them: a `Codable` enum whose encoding and decoding Swift
/// synthesises (`{"countUp": {}}`, `{"add": {"_0": 5}}`). The authority decodes one per action
/// it sequences, so its per-value cost is per-action overhead.
enum BenchAction: Codable, Equatable {
    case countUp
    case countUpAsync
    case add(Int)

    /// One of each case, the rows cycle through them.
    static let samples: [BenchAction] = [.countUp, .add(5), .countUpAsync, .add(-300)]
}
