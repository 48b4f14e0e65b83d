/// The calling thread's spare ``MessagePackWriter``s, shared by every encode call on it.
///
/// Why: a writer's buffer is an 8 KiB `malloc` on its first write (msgpack-c's sbuffer), and an
/// encode call needs one for its output and one more for each nested container whose count it
/// only knows at the end: encoding a mutation such as `{"increase": {}}` made and freed three.
/// Blocks of 8 KiB are past glibc's per-thread cache, so each went through the heap's bins and
/// their consolidation, a tenth of a worker's time. Kept writers are reset, not freed, and the
/// next encode on the thread packs into the same memory.
///
/// Bounds: at most ``maxSpare`` writers per thread, and none whose buffer grew past
/// ``maxKeptCapacity`` (a large state's encoding gives its memory back at once).
///
/// Thread rules: the pool belongs to its thread (a pthread key; the thread's exit frees it), and
/// a writer taken from it is its taker's alone until given back. An encode never suspends.
final class ThreadWriterPool {
    /// Writers kept per thread.
    static let maxSpare = 16
    /// The largest buffer kept, in bytes.
    static let maxKeptCapacity = 64 << 10

    private var spare: [MessagePackWriter] = []

    /// An empty writer: a kept one when the thread has one, else a new one.
    static func acquire() -> MessagePackWriter {
        guard let pool = current else { return MessagePackWriter() }
        var spare = take(&pool.spare)
        defer { pool.spare = spare }
        guard let writer = spare.popLast() else { return MessagePackWriter() }
        return writer
    }

    /// Keeps `writer` for the thread's next encode, emptied, unless the pool is full or the
    /// writer's buffer is too large to keep. The caller must not use it afterwards.
    static func keep(_ writer: MessagePackWriter) {
        guard writer.capacity <= maxKeptCapacity, let pool = current else { return }
        var spare = take(&pool.spare)
        defer { pool.spare = spare }
        guard spare.count < maxSpare else { return }
        writer.reset()
        spare.append(writer)
    }

    /// Each thread's pool, freed at the thread's exit.
    private static let local = ThreadLocalObject<ThreadWriterPool>()

    /// This thread's pool, made on first use; `nil` when no key could be made.
    private static var current: ThreadWriterPool? { local.current { ThreadWriterPool() } }
}
