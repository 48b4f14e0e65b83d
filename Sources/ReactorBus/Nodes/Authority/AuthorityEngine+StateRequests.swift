import MessagePack
import ReactorCore
import ReactorWire
import ZeroMQ

/// Requests for the whole state and its encodings: `snapshot` and `snapshot_chunk` replies, the
/// feed's snapshots, and where each encoding is made: on the loop for a small state, off it from
/// a copy of the state (``StateEncode``) for a large one, or by the loop's snapshot replica
/// (``encodesElsewhere``). One encoding at a time serves every request and the feed that wait
/// for it, and no request is answered with a state older than the one it arrived at.
extension AuthorityEngine {
    /// Answers a whole `snapshot` request: at once from the encoding of this version, or once
    /// the encoding of a large state is back.
    func handleWholeSnapshot(_ envelope: Envelope, id: UInt64) {
        metrics[.snapshotRequests] += 1
        let version = inSequencer { $0.version }
        if encodedStateCache?.version != version, encodesOffLoop {
            // A large state is encoded off the loop: the reply goes out once the bytes are back.
            waitForEncoding(PendingStateRequest(envelope: envelope, id: id, answer: .whole, atLeast: version))
        } else if let state = encodedState()?.bytes {
            replyState(envelope, id: id, version: version, actionSeq: sequencer.actionSeq, bytes: state)
        }
    }

    /// Answers one `snapshot_chunk` request: the current state's first chunk (`version` nil),
    /// or the next one of a version being fetched; `expired` when that version is gone.
    func handleSnapshotChunk(_ envelope: Envelope, id: UInt64, version: UInt64?, offset: UInt64, maxBytes: UInt64, now: UInt64) {
        let held: SnapshotTransfers.Held
        let heldVersion: UInt64
        if let version {
            guard let found = transfers.bytes(of: version, now: now) else {
                reply(envelope, .error(ref: id, code: .expired, message: "the authority no longer holds version \(version) of the state (a fetch idle for \(SnapshotTransfers.idleMilliseconds / 1_000) s, or more than \(SnapshotTransfers.maxVersions) versions fetched at once): ask again without a version"))
                return
            }
            held = found
            heldVersion = version
        } else {
            metrics[.snapshotRequests] += 1
            heldVersion = sequencer.version
            if let found = transfers.bytes(of: heldVersion, now: now) {
                held = found
            } else if startStateEncode != nil, encodedStateCache?.version != heldVersion {
                // Encoded off the loop: the reply goes out once the bytes are back.
                waitForEncoding(PendingStateRequest(envelope: envelope, id: id, answer: .chunk(offset: offset, maxBytes: maxBytes), atLeast: heldVersion))
                return
            } else {
                guard let state = encodedState()?.bytes else { return }
                transfers.hold(state, version: heldVersion, actionSeq: sequencer.actionSeq, now: now)
                held = SnapshotTransfers.Held(actionSeq: sequencer.actionSeq, bytes: state, lastUsed: now)
            }
        }
        replyChunk(envelope, id: id, held: held, version: heldVersion, offset: offset, maxBytes: maxBytes)
    }

    /// Queues `request` behind the encoding under way, or starts one for it: of the engine's
    /// own, or one the loop is to have its snapshot replica make (``encodesElsewhere``).
    private func waitForEncoding(_ request: PendingStateRequest) {
        if stateEncoding == nil {
            if encodesElsewhere {
                encodeElsewhere(forFeed: false)
            } else if let startStateEncode {
                startEncoding(with: startStateEncode, forFeed: false)
            }
        }
        stateEncoding?.waiting.append(request)
    }

    /// Copies the state (a reference, until the loop's next change) and starts encoding the copy.
    private func startEncoding(with start: (StateEncode) -> Void, forFeed: Bool) {
        let (state, encoder) = (sequencer.state, stateEncoder)
        let (version, actionSeq) = inSequencer { ($0.version, $0.actionSeq) }
        stateEncoding = StateEncodingUnderWay(version: version, forFeed: forFeed)
        start(StateEncode(version: version, actionSeq: actionSeq) { try encoder.encodeShared(state) })
    }

    /// Notes an encoding of the current state for the loop's snapshot replica to make:
    /// ``takeOutbox(_:)`` settles its version at the turn's end and asks the loop for it.
    private func encodeElsewhere(forFeed: Bool) {
        stateEncoding = StateEncodingUnderWay(version: inSequencer { $0.version }, forFeed: forFeed, elsewhere: true)
    }

    /// Starts an encoding of the current state for requests that an encoding of an older
    /// version left unanswered: elsewhere where the replica encodes, else (or `here`, when the
    /// replica's could not be made) of the engine's own.
    private func encodeAgain(for requests: [PendingStateRequest], here: Bool = false) {
        guard !requests.isEmpty else { return }
        if encodesElsewhere, !here {
            encodeElsewhere(forFeed: false)
        } else if let startStateEncode {
            startEncoding(with: startStateEncode, forFeed: false)
        }
        stateEncoding?.waiting = requests
    }

    /// Takes the bytes a ``StateEncode`` brought back: answers the requests that waited for them
    /// and arrived at their version or before (a fetch's later chunks are of that version; a
    /// request that arrived later waits for an encoding of the current state, started now), and
    /// returns them for the feed to publish when it asked for them. A failed encoding is logged,
    /// and its requesters ask again after their timeout, as when an encoding on the loop fails
    /// (one the replica could not make is made here for them); the feed tries again when its
    /// schedule next allows.
    func finishStateEncode(_ done: StateEncode.Done, now: UInt64) -> FeedSnapshot? {
        guard let encoding = stateEncoding, encoding.version == done.version else { return nil }
        stateEncoding = nil
        switch done.result {
        case .success(let bytes):
            lastStateBytes = bytes.count
            metrics.stateEncodeDuration.observe(Double(done.nanoseconds) / 1e9)
            metrics[encoding.elsewhere ? .stateEncodesByReplica : .stateEncodesOffLoop] += 1
            if sequencer.version == done.version { encodedStateCache = (done.version, bytes) }
            var later: [PendingStateRequest] = []
            let held = SnapshotTransfers.Held(actionSeq: done.actionSeq, bytes: bytes, lastUsed: now)
            var holding = false
            for request in encoding.waiting {
                guard request.atLeast <= done.version else {
                    later.append(request)
                    continue
                }
                switch request.answer {
                case .chunk(let offset, let maxBytes):
                    if !holding {
                        // Kept for the fetch's next chunks.
                        transfers.hold(bytes, version: done.version, actionSeq: done.actionSeq, now: now)
                        holding = true
                    }
                    replyChunk(request.envelope, id: request.id, held: held, version: done.version, offset: offset, maxBytes: maxBytes)
                case .whole:
                    replyState(request.envelope, id: request.id, version: done.version, actionSeq: done.actionSeq, bytes: bytes)
                }
            }
            encodeAgain(for: later)
            return encoding.forFeed ? FeedSnapshot(version: done.version, actionSeq: done.actionSeq, bytes: bytes, encodeNanoseconds: done.nanoseconds) : nil
        case .failure(let error) where encoding.elsewhere:
            // The replica stopped, or could not apply the records or reach the version (the loop
            // retires it): the requesters get an encoding of the engine's own instead of waiting
            // for their timeout.
            logger.warning("the snapshot replica did not encode version \(done.version) of the state (\(error)); encoding it here")
            encodeAgain(for: encoding.waiting, here: true)
            return nil
        case .failure(let error):
            logger.error("cannot encode \(R.State.self): \(error)")
            return nil
        }
    }

    /// The chunk of `held` (the bytes of `heldVersion`) that a request asked for.
    private func replyChunk(_ envelope: Envelope, id: UInt64, held: SnapshotTransfers.Held, version heldVersion: UInt64, offset: UInt64, maxBytes: UInt64) {
        let total = UInt64(held.bytes.count)
        guard offset <= total else {
            metrics[.malformed] += 1
            reply(envelope, .error(ref: id, code: .malformed, message: "snapshot_chunk.offset \(offset) is past the end of version \(heldVersion), which is \(total) bytes"))
            return
        }
        let end = offset + min(total - offset, maxBytes, SnapshotTransfers.maxChunkBytes)
        metrics[.snapshotChunks] += 1
        let header = AuthorityReply.snapshotChunk(requestID: id, version: heldVersion, actionSeq: held.actionSeq, app: configuration.appName,
                                                  totalBytes: total, offset: offset, payload: [])
        replyLending(envelope, id: id, header: header, bytes: held.bytes, range: Int(offset) ..< Int(end))
    }

    /// Queues a whole `snapshot` reply.
    private func replyState(_ envelope: Envelope, id: UInt64, version: UInt64, actionSeq: UInt64, bytes: EncodedBytes) {
        let header = AuthorityReply.snapshot(requestID: id, version: version, actionSeq: actionSeq, app: configuration.appName, payload: [])
        replyLending(envelope, id: id, header: header, bytes: bytes, range: 0 ..< bytes.count)
    }

    /// Queues a reply whose payload is `range` of an encoding of the state: lent to libzmq as
    /// it is, not copied. `header` is the reply without its payload.
    private func replyLending(_ envelope: Envelope, id: UInt64, header: AuthorityReply, bytes: EncodedBytes, range: Range<Int>) {
        queue(.lending(head: Array(envelope) + [[UInt8](header.packedHeader(writer))], last: bytes, range: range), to: envelope, request: id)
    }

    /// The feed's snapshot, when `demand` asks for one and the version moved since the one
    /// published last: the state encoded now, with how long that took (`nil` when it was
    /// encoded before, for a request); or, for a large state (``encodesOffLoopAbove``) where
    /// the loop can encode off it, the version whose encoding started or was under way already,
    /// or (``encodesElsewhere``) the version the loop is to have its snapshot replica encode;
    /// ``finishStateEncode(_:now:)`` takes the bytes back either way. `nil` while another
    /// encoding for the feed is under way.
    ///
    /// ``takeOutbox(_:)`` puts it in the outbox. A loop that publishes the turn's snapshot right
    /// after its acks may instead take the outbox with a demand for no snapshot and ask here once
    /// the acks have left, before anything else changes the state: the acks do not wait for
    /// the encoding.
    package func feedState(_ demand: Outbox.Demand) -> FeedSnapshot.Due? {
        let version = inSequencer { $0.version }
        let dueByCount = demand.snapshotAtVersion.map { version >= $0 } ?? false
        guard demand.publishedVersion != version, demand.snapshot || dueByCount else { return nil }
        if let encoding = stateEncoding {
            // One encoding at a time: the feed takes the one under way, unless it has it already
            // or it is of the version published last.
            guard !encoding.forFeed, encoding.version != demand.publishedVersion else { return nil }
            stateEncoding?.forFeed = true
            return .encoding(encoding.elsewhere ? .elsewhere(version: encoding.version) : .offLoop(version: encoding.version))
        }
        if encodedStateCache?.version != version, encodesOffLoop, let startStateEncode {
            if encodesElsewhere {
                encodeElsewhere(forFeed: true)
                return .encoding(.elsewhere(version: version))
            }
            startEncoding(with: startStateEncode, forFeed: true)
            return .encoding(.offLoop(version: version))
        }
        guard let state = encodedState() else { return nil }
        return .encoded(state.bytes, nanoseconds: state.nanoseconds)
    }

    /// The state encoded as for the feed, here and now: what a snapshot replica hands the loop.
    package func encodeState() throws -> EncodedBytes {
        try stateEncoder.encodeShared(sequencer.state)
    }

    /// Forgets the encoding under way at `version` that the loop could not arrange after all
    /// (its replica had stopped): the feed asks again when its schedule next allows; requests
    /// that waited for it get an encoding of the current state, started here.
    package func abandonStateEncoding(version: UInt64) {
        guard let encoding = stateEncoding, encoding.version == version else { return }
        stateEncoding = nil
        encodeAgain(for: encoding.waiting, here: true)
    }

    /// Whether the state is large enough (``encodesOffLoopAbove``) to be encoded off the loop,
    /// and a loop is there to do it.
    private var encodesOffLoop: Bool {
        startStateEncode != nil && lastStateBytes.map { $0 >= encodesOffLoopAbove } == true
    }

    /// The size of the state's last encoding, 0 before one: what the feed expects its snapshots to weigh.
    var knownStateBytes: Int { lastStateBytes ?? 0 }

    /// Notes the size of the state's encoding from elsewhere (the snapshot recovered from), so
    /// that the first feed snapshot of a large state is encoded off the loop too.
    package func noteStateBytes(_ bytes: Int) {
        lastStateBytes = bytes
    }

    /// The current state encoded for the wire, reused while the version stays the same, with
    /// how long encoding it took now (`nil`: encoded before, for a request or the feed).
    private func encodedState() -> (bytes: EncodedBytes, nanoseconds: UInt64?)? {
        let version = inSequencer { $0.version }
        if let cached = encodedStateCache, cached.version == version { return (cached.bytes, nil) }
        let bytes: EncodedBytes
        let start = MonotonicClock.nanoseconds()
        do {
            bytes = try encodeState()
        } catch {
            logger.error("cannot encode \(R.State.self): \(error)")
            return nil
        }
        let nanoseconds = MonotonicClock.nanoseconds() - start
        metrics.stateEncodeDuration.observe(Double(nanoseconds) / 1e9)
        metrics[.stateEncodesOnLoop] += 1
        encodedStateCache = (version, bytes)
        lastStateBytes = bytes.count
        return (bytes, nanoseconds)
    }

    /// An encoding a request asked the replica for this turn is of the state the turn's records
    /// leave: `version`, known once the turn is over.
    func settleElsewhereEncoding(at version: UInt64) {
        if let encoding = stateEncoding, encoding.elsewhere, !encoding.arranged { stateEncoding?.version = version }
    }

    /// The version the loop is to have its snapshot replica encode, once: `nil` when none waits
    /// to be asked for.
    func elsewhereEncodingToArrange() -> UInt64? {
        guard let encoding = stateEncoding, encoding.elsewhere, !encoding.arranged else { return nil }
        stateEncoding?.arranged = true
        return encoding.version
    }
}
