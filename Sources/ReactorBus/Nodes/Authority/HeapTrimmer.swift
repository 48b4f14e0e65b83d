import Glibc

/// Gives freed heap memory back to the system now and then, after large messages went through.
///
/// libzmq frees a queued message on its I/O thread once the peer has taken it (or the queue
/// dropped it). With glibc, blocks of a few hundred KiB (snapshots of a large state) come from
/// the heap once the dynamic mmap threshold has risen, and freeing them leaves the pages in the
/// process: a subscriber that stalled and then drained its queue would leave the authority's
/// RSS at its peak. `malloc_trim(0)` returns every free page of every arena. It is looked up at
/// run time (`dlsym`), so on a C library without it the trimmer does nothing.
struct HeapTrimmer {
    private typealias Trim = @convention(c) (Int) -> Int32

    /// glibc's `malloc_trim`, if the C library has one.
    private static let trim: Trim? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
    }()

    /// Messages at least this large make trimming worthwhile.
    static let largeMessageBytes = 64 << 10

    private let intervalMilliseconds: UInt64
    private var nextTrim: UInt64 = 0

    /// A trimmer that trims at most once per `interval`.
    init(interval: Duration) {
        intervalMilliseconds = max(1, interval.wholeMilliseconds)
    }

    /// Trims when the interval has passed and large messages have been sent (`largestMessage`
    /// is the largest message bytes sent so far); returns whether it trimmed.
    @discardableResult
    mutating func trimIfDue(now: UInt64, largestMessage: Int) -> Bool {
        guard largestMessage >= Self.largeMessageBytes, now >= nextTrim, let trim = Self.trim else { return false }
        nextTrim = now + intervalMilliseconds
        _ = trim(0)
        return true
    }
}
