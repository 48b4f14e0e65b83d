import Foundation
import Glibc
import Synchronization
import SystemCalls

/// Encodes and writes snapshots on a thread of its own, so that the authority's loop never
/// waits for an encode, a `write`, an `fsync` or a rename.
///
/// The loop takes an immutable copy of its checkpoint (Swift values are copy-on-write, so this is
/// cheap) and the LSN it covers, and ``submit(_:)``s them; the writer thread encodes the copy and
/// writes it to its ``SnapshotDestination`` (a ``SnapshotStore`` it creates, owns and uses only on
/// its own thread). The loop collects the ``Outcome`` with ``takeOutcome()`` on a later turn, or
/// waits for it with ``waitForOutcome()`` when shutting down, and compacts its journal itself:
/// the ``Journal`` never leaves the loop's thread.
///
/// One request at a time: ``submit(_:)`` refuses a second one until the first's outcome was
/// taken, so snapshots never pile up. The thread is started by `init` and ends after ``stop()``.
/// Runs at a lower CPU priority (nice +10) than the loop, which should win when cores are short.
package final class SnapshotWriter: Sendable {
    /// What to write: the encoding is done on the writer thread.
    package struct Request: Sendable {
        /// The snapshot covers the journal records through this LSN, exactly.
        package var lsn: UInt64
        /// The state's version at that LSN (for logs).
        package var version: UInt64
        /// Encodes the copied checkpoint and calls `write` once with its bytes, which are only
        /// valid during that call: a large state's bytes go to the file from the encoder's own
        /// buffer, without a copy of them made first.
        package typealias Encode = @Sendable (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
        /// See ``Encode``.
        package var encode: Encode

        package init(lsn: UInt64, version: UInt64, encode: @escaping Encode) {
            self.lsn = lsn
            self.version = version
            self.encode = encode
        }
    }

    /// What became of a request.
    package struct Outcome: Sendable {
        package var lsn: UInt64
        package var version: UInt64
        /// What the destination wrote (and how far the journal may be compacted), or why not.
        package var result: Result<SnapshotWriteResult, any Error>
        /// Encode plus write, on the writer thread.
        package var elapsed: Duration
        /// The encoded snapshot's size (0 when encoding failed).
        package var bytes: Int = 0

        package init(lsn: UInt64, version: UInt64, result: Result<SnapshotWriteResult, any Error>, elapsed: Duration, bytes: Int = 0) {
            self.lsn = lsn
            self.version = version
            self.result = result
            self.elapsed = elapsed
            self.bytes = bytes
        }
    }

    private struct State {
        var request: Request?
        /// A request was submitted and its outcome not yet taken.
        var busy = false
        var outcome: Outcome?
        var stopping = false
        var finished = false
    }

    private let shared = ThreadHandoff(State())

    /// Starts the writer thread. `makeDestination` runs on that thread, at the first request
    /// (and again at the next one if it threw), and what it returns never leaves the thread.
    package init(name: String, makeDestination: @escaping @Sendable () throws -> any SnapshotDestination) {
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            // On Linux the nice value is per thread, and `who` 0 is the calling thread.
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            var destination: (any SnapshotDestination)?
            while let request = nextRequest() {
                let outcome = Self.perform(request, on: &destination, making: makeDestination)
                locked { $0.outcome = outcome }
            }
            locked { $0.finished = true }
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Encodes and writes `request` on the calling thread (a writer's own, or another that keeps
    /// its own state to snapshot): `destination` is made by `makeDestination` at the first
    /// request, and made again at the next one if that threw.
    package static func perform(_ request: Request, on destination: inout (any SnapshotDestination)?,
                                making makeDestination: () throws -> any SnapshotDestination) -> Outcome {
        let start = ContinuousClock.now
        var bytes = 0
        let result = Result { () throws -> SnapshotWriteResult in
            var written: SnapshotWriteResult?
            try request.encode { payload in
                bytes = payload.count
                if destination == nil { destination = try makeDestination() }
                guard let destination else { throw PersistenceError.invalidConfiguration("no snapshot destination") }
                written = try destination.write(payload, coveringThrough: request.lsn)
            }
            guard let written else { throw PersistenceError.invalidConfiguration("the snapshot's encoder lent no bytes") }
            return written
        }
        return Outcome(lsn: request.lsn, version: request.version, result: result, elapsed: ContinuousClock.now - start, bytes: bytes)
    }

    /// Whether a request was submitted and its outcome not yet taken.
    package var isBusy: Bool { locked { $0.busy } }

    /// Hands a request to the writer thread.
    ///
    /// - Returns: `false` (and drops `request`) while the previous one's outcome was not taken,
    ///   or after ``stop()``.
    @discardableResult
    package func submit(_ request: Request) -> Bool {
        locked { state in
            guard !state.busy, !state.stopping else { return false }
            state.busy = true
            state.request = request
            return true
        }
    }

    /// The finished request's outcome, if it has finished; never blocks.
    package func takeOutcome() -> Outcome? {
        locked { state in
            guard let outcome = state.outcome else { return nil }
            state.outcome = nil
            state.busy = false
            return outcome
        }
    }

    /// Waits until the submitted request has finished and returns its outcome; `nil` at once
    /// when nothing was submitted (or the outcome was already taken).
    package func waitForOutcome() -> Outcome? {
        shared.wait { state -> Outcome?? in
            if state.busy && state.outcome == nil && !state.finished { return nil }
            defer { state.outcome = nil; state.busy = false }
            return .some(state.outcome)
        }
    }

    /// Lets the request in hand finish, then ends the thread and returns once it has ended.
    /// A request not yet started is dropped. Idempotent.
    package func stop() {
        locked { state in
            state.stopping = true
            state.request = nil
        }
        shared.wait { $0.finished ? () : nil }
    }

    /// Blocks the writer thread until there is a request (taking it) or the writer stops (`nil`).
    private func nextRequest() -> Request? {
        shared.wait { state -> Request?? in
            if state.stopping { return .some(nil) }
            defer { state.request = nil }
            return state.request.map { .some($0) }
        }
    }

    private func locked<T: Sendable>(_ body: (inout State) -> T) -> T {
        shared.locked(body)
    }
}
