/// The set of `client_seq` numbers accepted from one client, as sorted, disjoint, non-adjacent
/// closed ranges.
///
/// A client numbers its actions 1, 2, 3, ..., so the set is usually one range and costs 16 bytes
/// however many actions the client sent; each sequence number that was refused (or never sent)
/// below a later accepted one adds a gap. The set is exact: membership is never guessed, which
/// is what lets the authority tell "applied" from "never applied" for any resend.
struct AcceptedSequences: Codable, Sendable, Equatable {
    /// `lower...upper`, stored as two numbers so the encoding stays a flat pair.
    struct Span: Codable, Sendable, Equatable {
        var lower: UInt64
        var upper: UInt64

        init(lower: UInt64, upper: UInt64) {
            self.lower = lower
            self.upper = upper
        }

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            lower = try container.decode(UInt64.self)
            upper = try container.decode(UInt64.self)
            guard lower <= upper else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "accepted range \(lower)...\(upper) is empty")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(lower)
            try container.encode(upper)
        }
    }

    private(set) var spans: [Span] = []

    init() {}

    init(spans: [Span]) {
        self.spans = spans
    }

    /// The highest accepted number, or 0 when none.
    var highest: UInt64 { spans.last?.upper ?? 0 }

    /// The number of gaps between accepted ranges.
    var gapCount: Int { max(0, spans.count - 1) }

    func contains(_ seq: UInt64) -> Bool {
        guard let last = spans.last else { return false }
        if seq >= last.lower { return seq <= last.upper }
        let index = firstSpan(endingAtOrAbove: seq)
        return index < spans.count && spans[index].lower <= seq
    }

    /// Adds `seq`; O(1) for the next number in order, O(log n + n) for one that fills a gap.
    mutating func insert(_ seq: UInt64) {
        guard let last = spans.last else {
            spans.append(Span(lower: seq, upper: seq))
            return
        }
        if seq == last.upper &+ 1 {
            spans[spans.count - 1].upper = seq
            return
        }
        if seq > last.upper {
            spans.append(Span(lower: seq, upper: seq))
            return
        }
        let index = firstSpan(endingAtOrAbove: seq)
        if spans[index].lower <= seq { return }
        let joinsNext = spans[index].lower == seq + 1
        let joinsPrevious = index > 0 && spans[index - 1].upper + 1 == seq
        switch (joinsPrevious, joinsNext) {
        case (true, true):
            spans[index - 1].upper = spans[index].upper
            spans.remove(at: index)
        case (true, false):
            spans[index - 1].upper = seq
        case (false, true):
            spans[index].lower = seq
        case (false, false):
            spans.insert(Span(lower: seq, upper: seq), at: index)
        }
    }

    /// Removes the oldest range and returns its upper end: what the ledger stops knowing when a
    /// client leaves more gaps than it keeps.
    mutating func dropOldest() -> UInt64 {
        spans.removeFirst().upper
    }

    /// The index of the first span whose upper end is `>= seq` (`spans.count` if none).
    private func firstSpan(endingAtOrAbove seq: UInt64) -> Int {
        var low = 0
        var high = spans.count
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].upper < seq { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
