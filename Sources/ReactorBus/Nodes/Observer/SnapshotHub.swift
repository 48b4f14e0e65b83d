import ReactorCore
import Synchronization

/// A snapshot as the wire carries it.
typealias RawSnapshot = (version: UInt64, actionSeq: UInt64, payload: [UInt8])

/// The streams of an ``Observer`` and the snapshot they were last given.
///
/// The loop publishes under the lock only to swap in the new current snapshot and copy the
/// subscriber lists; it yields outside the lock. A new subscriber gets the current snapshot
/// under the lock, so it never sees a version twice or an older one after a newer one. A
/// snapshot arrives either as bytes (fetched or from the feed) or as a state the observer built
/// by applying mutations; the other form is made only when a stream of that form exists.
final class SnapshotHub<State: Sendable>: Sendable {
    private struct Current {
        var version: UInt64
        var actionSeq: UInt64
        var payload: [UInt8]?
        var decoded: Snapshot<State>?
    }

    private struct Subscribers {
        var typed: [Int: AsyncStream<Snapshot<State>>.Continuation] = [:]
        var raw: [Int: AsyncStream<RawSnapshot>.Continuation] = [:]
        var nextID = 0
        var current: Current?
        var finished = false
    }

    private let subscribers = Mutex(Subscribers())
    private let bufferSize: Int
    private let decode: @Sendable ([UInt8]) throws -> State
    private let encode: @Sendable (State) throws -> [UInt8]
    private let counters: NodeMetrics<ObserverMetrics>

    init(bufferSize: Int, counters: NodeMetrics<ObserverMetrics>, decode: @escaping @Sendable ([UInt8]) throws -> State,
         encode: @escaping @Sendable (State) throws -> [UInt8]) {
        self.bufferSize = max(1, bufferSize)
        self.counters = counters
        self.decode = decode
        self.encode = encode
    }

    /// A new stream that starts with the current snapshot, if there is one.
    func typedStream() -> AsyncStream<Snapshot<State>> {
        let (stream, continuation) = AsyncStream.makeStream(of: Snapshot<State>.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = subscribers.withLock { state -> Int? in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.typed[id] = continuation
            if var current = state.current {
                if current.decoded == nil, let payload = current.payload {
                    current.decoded = try? Snapshot(version: current.version, state: decode(payload))
                    state.current = current
                }
                if let snapshot = current.decoded { continuation.yield(snapshot) }
            }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.typed.removeValue(forKey: id) }
        }
        return stream
    }

    /// A new stream of raw snapshots that starts with the current one, if there is one.
    func rawStream() -> AsyncStream<RawSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: RawSnapshot.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = subscribers.withLock { state -> Int? in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.raw[id] = continuation
            if var current = state.current {
                if current.payload == nil, let decoded = current.decoded {
                    current.payload = try? encode(decoded.state)
                    state.current = current
                }
                if let payload = current.payload { continuation.yield((current.version, current.actionSeq, payload)) }
            }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.raw.removeValue(forKey: id) }
        }
        return stream
    }

    /// Makes `snapshot` the current one and gives it to every stream.
    func publish(_ snapshot: RawSnapshot) {
        let (typed, raw) = subscribers.withLock { state in
            state.current = Current(version: snapshot.version, actionSeq: snapshot.actionSeq, payload: snapshot.payload)
            return (Array(state.typed.values), Array(state.raw.values))
        }
        for continuation in raw { continuation.yield(snapshot) }
        guard !typed.isEmpty else { return }
        let decoded: Snapshot<State>
        do {
            decoded = Snapshot(version: snapshot.version, state: try decode(snapshot.payload))
        } catch {
            counters.update { $0.malformed += 1 }
            return
        }
        subscribers.withLock { state in
            if state.current?.version == snapshot.version { state.current?.decoded = decoded }
        }
        for continuation in typed { continuation.yield(decoded) }
    }

    /// Makes a state the observer built (by applying mutations) the current one and gives it to
    /// every stream; raw streams get it encoded.
    func publish(_ snapshot: Snapshot<State>, actionSeq: UInt64) {
        let (typed, raw) = subscribers.withLock { state in
            state.current = Current(version: snapshot.version, actionSeq: actionSeq, payload: nil, decoded: snapshot)
            return (Array(state.typed.values), Array(state.raw.values))
        }
        for continuation in typed { continuation.yield(snapshot) }
        guard !raw.isEmpty else { return }
        guard let payload = try? encode(snapshot.state) else { return }
        subscribers.withLock { state in
            if state.current?.version == snapshot.version { state.current?.payload = payload }
        }
        for continuation in raw { continuation.yield((snapshot.version, actionSeq, payload)) }
    }

    /// Ends every stream; later streams end at once.
    func finish() {
        let (typed, raw) = subscribers.withLock { state in
            state.finished = true
            defer { state.typed.removeAll(); state.raw.removeAll() }
            return (Array(state.typed.values), Array(state.raw.values))
        }
        for continuation in typed { continuation.finish() }
        for continuation in raw { continuation.finish() }
    }
}
