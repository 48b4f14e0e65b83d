import Testing
@testable import ReactorCore

/// The authority's map of actions with running effects: exact against a dictionary whatever the
/// order, and its ring bounded by the entries it holds, not by the keys that passed.
@Suite struct SequenceWindowTests {
    @Test func keysInsertedAndRemovedInOrderKeepTheRingShort() {
        var window = SequenceWindow<String>()
        for key in UInt64(1)...10_000 {
            window.insert("c\(key % 7)", for: key)
            if key > 100 { #expect(window.removeValue(for: key - 100) == "c\((key - 100) % 7)") }
        }
        #expect(window.count == 100)
        #expect(window.ringSpan == 100)
        #expect(window[9_901] == "c3")
        #expect(window[9_900] == nil)
        #expect(window.entries == Dictionary(uniqueKeysWithValues: (UInt64(9_901)...10_000).map { ($0, "c\($0 % 7)") }))
        for key in UInt64(9_901)...10_000 { window.removeValue(for: key) }
        #expect(window.isEmpty)
        #expect(window.ringSpan == 0)
    }

    @Test func anOldKeyLeftBehindMovesOutOfTheRing() {
        var window = SequenceWindow<Int>()
        window.insert(-1, for: 1)
        for key in UInt64(2)...100_000 {
            window.insert(Int(key), for: key)
            window.removeValue(for: key)
        }
        #expect(window.count == 1)
        #expect(window[1] == -1)
        #expect(window.ringSpan <= SequenceWindow<Int>.minimumSpan)
        #expect(window.removeValue(for: 1) == -1)
        #expect(window.isEmpty)
    }

    @Test func aLongGapOfKeysIsNotPadded() {
        var window = SequenceWindow<Int>()
        window.insert(1, for: 1)
        window.insert(2, for: 10_000_000)
        window.insert(3, for: 10_000_001)
        #expect(window.ringSpan == 2)
        #expect(window.entries == [1: 1, 10_000_000: 2, 10_000_001: 3])
        // A key below the ring's start is held too, and a second insert replaces.
        window.insert(4, for: 5)
        window.insert(5, for: 10_000_000)
        #expect(window.count == 4)
        #expect(window[5] == 4)
        #expect(window[10_000_000] == 5)
        #expect(window.removeValue(for: 5) == 4)
        #expect(window.removeValue(for: 5) == nil)
        #expect(window.removeValue(for: 6) == nil)
        #expect(window.entries.values.sorted() == [1, 3, 5])
    }

    @Test func aKeyThatLeftTheRingIsFoundWhenTheRingGrowsOverItAgain() {
        var window = SequenceWindow<String>()
        window.insert("a", for: 100)
        window.insert("b", for: 50)  // below the ring's start: in the dictionary
        window.removeValue(for: 100)  // the ring is empty
        window.insert("c", for: 40)  // the ring starts again, below 50
        window.insert("d", for: 60)  // and now covers 50's empty slot
        #expect(window.count == 3)
        #expect(window[50] == "b")
        #expect(window.entries == [40: "c", 50: "b", 60: "d"])
        window.insert("e", for: 50)  // replaces, into the ring
        #expect(window.count == 3)
        #expect(window[50] == "e")
        #expect(window.removeValue(for: 50) == "e")
        #expect(window.removeValue(for: 50) == nil)
        #expect(window.entries == [40: "c", 60: "d"])
    }

    @Test func aWindowBuiltFromEntriesHoldsExactlyThem() {
        let entries: [UInt64: String] = [3: "a", 9: "b", 10: "c", 70_000: "d", 2: "e"]
        let window = SequenceWindow(entries)
        #expect(window.entries == entries)
        #expect(window.count == 5)
        #expect(SequenceWindow<String>([:]).isEmpty)
    }

    /// Random increasing keys with gaps, removals mostly of the oldest, some of any key, some
    /// of keys not held, inserts of any key (rarely, or at every chance): the same answers as
    /// a dictionary after every step. (Every step O(1): the suite runs beside tests that wait on
    /// the shared task pool.)
    @Test(arguments: [UInt64(1), 2, 3], [1, 50])
    func itAnswersAsADictionaryDoes(seed: UInt64, anyKeyEvery: Int) {
        var random = CancellationModelTests.Generator(state: seed)
        var window = SequenceWindow<UInt64>()
        var model: [UInt64: UInt64] = [:]
        // Keys in the order they were inserted; those before `head` are all removed.
        var order: [UInt64] = []
        var head = 0
        var next: UInt64 = 1
        var mismatches = 0
        for step in 0 ..< 30_000 {
            let roll = random.next() % 100
            if roll < 45 {
                next += random.next() % 100 < 90 ? 1 : random.next() % 20_000
                window.insert(next &* 3, for: next)
                model[next] = next &* 3
                order.append(next)
            } else if roll < 80 {
                while head < order.count, model[order[head]] == nil { head += 1 }
                guard head < order.count else { continue }
                let oldest = order[head]
                if window.removeValue(for: oldest) != model.removeValue(forKey: oldest) { mismatches += 1 }
            } else if roll < 95 {
                guard head < order.count else { continue }
                // Any key inserted and not known removed: held, or already gone (both say nil).
                let any = order[head + Int(random.next() % UInt64(order.count - head))]
                if window.removeValue(for: any) != model.removeValue(forKey: any) { mismatches += 1 }
            } else {
                let key = random.next() % (next + 10)
                if window[key] != model[key] { mismatches += 1 }
                if step % anyKeyEvery == 0 {
                    window.insert(7, for: key)
                    if model.updateValue(7, forKey: key) == nil { order.append(key) }
                }
            }
            if window.count != model.count { mismatches += 1 }
            if window.ringSpan > max(SequenceWindow<UInt64>.minimumSpan, 8 * window.count) { mismatches += 1 }
        }
        #expect(mismatches == 0, "seed \(seed)")
        #expect(window.entries == model)
    }

    /// Any order at all over a few keys: the ring empties and starts again below and above the
    /// keys the dictionary holds, over and over.
    @Test(arguments: [UInt64(11), 12, 13])
    func anyOrderOverFewKeysAnswersAsADictionaryDoes(seed: UInt64) {
        var random = CancellationModelTests.Generator(state: seed)
        var window = SequenceWindow<UInt64>()
        var model: [UInt64: UInt64] = [:]
        var mismatches = 0
        for step in UInt64(0) ..< 20_000 {
            let key = random.next() % 64
            switch random.next() % 3 {
            case 0:
                window.insert(step, for: key)
                model[key] = step
            case 1:
                if window.removeValue(for: key) != model.removeValue(forKey: key) { mismatches += 1 }
            default:
                if window[key] != model[key] { mismatches += 1 }
                if window.update(key, { $0 += 1 }) != nil { model[key]? += 1 }
            }
            if window.count != model.count { mismatches += 1 }
        }
        #expect(mismatches == 0, "seed \(seed)")
        #expect(window.entries == model)
    }
}
