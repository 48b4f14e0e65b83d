import MessagePack
import ReactorCore
import ReactorWire

extension AuthorityEngine {
    /// Everything one turn of the engine asks the loop to do, in the order it must happen:
    /// journal ``records`` (and start a snapshot from ``checkpoint``), then send ``replies`` and
    /// ``toWorkers``, then publish ``applied`` and ``state`` on the feed. Only ``promptReplies``
    /// and ``promptToWorkers`` may leave before the records are durable.
    ///
    /// The loop carries it out and never reads the engine back: what it sees while doing so
    /// (journal commits, refused replies, snapshots written or published) goes back in as an
    /// ``AuthorityLoopReport``.
    package struct Outbox {
        /// What the loop will do with the outbox, so the engine prepares only what is used.
        package struct Demand: Equatable {
            /// The feed has mutation subscribers: every applied mutation carries its payload.
            package var mutations = false
            /// The feed has snapshot subscribers: the outbox carries the encoded ``state`` when
            /// the state's version differs from ``publishedVersion``.
            package var snapshot = false
            /// The version of the last snapshot the feed published; `nil` before the first.
            package var publishedVersion: UInt64?
            /// The feed has snapshot subscribers and its schedule counts versions: the outbox
            /// carries the encoded ``state`` once the version reaches this, whatever ``snapshot``
            /// says (`nil`: no snapshot is due by count).
            package var snapshotAtVersion: UInt64?
            /// A snapshot is due once the journal holds this many of the turn's records (0: due
            /// now): the outbox then carries the ``checkpoint``. `nil`: none can start.
            package var checkpointAtRecords: Int?
            /// The projections the feed has subscribers for: the outbox carries those whose value
            /// changed since it was last published (``Outbox/projections``).
            package var projections: Set<String> = []

            /// Prepares nothing beyond replies, worker messages, applied mutations and records.
            package init(mutations: Bool = false, snapshot: Bool = false, publishedVersion: UInt64? = nil, snapshotAtVersion: UInt64? = nil, checkpointAtRecords: Int? = nil,
                         projections: Set<String> = []) {
                self.mutations = mutations
                self.snapshot = snapshot
                self.publishedVersion = publishedVersion
                self.snapshotAtVersion = snapshotAtVersion
                self.checkpointAtRecords = checkpointAtRecords
                self.projections = projections
            }
        }

        /// An applied mutation and its payload bytes, if any. A struct, not a tuple: in code
        /// generic over the reactor a tuple's type is looked up at run time, under a lock, per use.
        package struct Applied {
            package var mutation: AppliedMutation<R.Mutation>
            package var payload: [UInt8]?
        }

        // The fields whose types depend on the reactor start from `init()`, not from a literal:
        // in code generic over the reactor, `[]` and `[:]` went through the run time's literal
        // initialisers (an empty array allocated, type metadata looked up) for every outbox.

        /// Replies for the actions socket, in the order the requests were read.
        package var replies: [QueuedReply] = []
        /// How many of ``replies`` are acks.
        package var acks = 0
        /// Frames for the workers socket, routing id first.
        package var toWorkers: [[[UInt8]]] = []
        /// Acks for clients that read `acks` messages, packed into ``replies`` when the outbox is
        /// taken.
        var ackBatches = ClientAckBatches()
        /// Jobs for workers that read `jobs` messages, packed into ``toWorkers`` when the outbox
        /// is taken.
        var jobBatches = WorkerJobBatches()
        /// Replies that depend on nothing in the journal (`pong`): they leave at once, even while
        /// the turn's other messages wait for its records to be durable, so a slow disk does not
        /// look like a dead authority.
        package var promptReplies: [[[UInt8]]] = []
        /// Worker messages that depend on nothing in the journal (heartbeats), likewise.
        package var promptToWorkers: [[[UInt8]]] = []
        /// Applied mutations (while ``AuthorityEngine/followsMutations``), in order; their
        /// payloads are in ``appliedPayloads``. The reactor's sequencer appends to this array
        /// itself, in code compiled for the reactor's types.
        package var appliedMutations = [AppliedMutation<R.Mutation>]()
        /// The payload bytes of each of ``appliedMutations``, at the same index: when they
        /// arrived encoded (from a worker) or when the ``Demand`` asked for mutations (`nil`
        /// only if the app's type cannot encode). Apart, so that code not specialised for the
        /// reactor counts and fills them without looking up its types.
        package var appliedPayloads: [[UInt8]?] = []

        /// Applied mutations with their payloads, in order.
        package var applied: [Applied] {
            (0 ..< appliedPayloads.count).map { Applied(mutation: appliedMutations[$0], payload: appliedPayloads[$0]) }
        }
        /// Records to append to the journal before replies go out.
        package var records: [AuthorityRecord] = []
        /// The replies (by index in ``replies``) that answer a `snapshot` or `stats` request:
        /// the loop refuses one with `busy` when its client has too many reply bytes unread.
        package var requestReplies = [Int: RequestReply]()
        /// The state's version and last action's sequence number after the turn (for the feed's
        /// snapshot or heartbeat).
        package var version: UInt64 = 0
        package var actionSeq: UInt64 = 0
        /// The state encoded for the feed, when the ``Demand`` asked for a snapshot and the
        /// version moved since the last one published.
        package var state: EncodedBytes?
        /// How long encoding ``state`` took, in nanoseconds (`nil` when it was encoded before,
        /// for a request): the feed's snapshot schedule adapts to it.
        package var stateEncodeNanoseconds: UInt64?
        /// The feed's snapshot being encoded off the loop, or to be encoded elsewhere (a snapshot
        /// replica, which the loop asks), when the ``Demand`` asked for one and the state is
        /// large (``AuthorityEngine/feedState(_:)``).
        package var stateEncoding: FeedSnapshot.Encoding?
        /// The version of the state the loop is to have its snapshot replica encode, at the
        /// journal's last record after this turn's (``AuthorityEngine/encodesElsewhere``): for
        /// the feed, for requests waiting, or both; the bytes go back to
        /// ``AuthorityEngine/finishStateEncode(_:now:)``.
        package var encodeElsewhere: UInt64?
        /// The durable snapshot of the engine after the turn (covering exactly its ``records``),
        /// when the ``Demand`` said one is due.
        package var checkpoint: AuthorityCheckpoint<R>?
        /// Projections whose value changed since last published, encoded, at ``version``.
        package var projections: [(name: String, payload: [UInt8])] = []
        /// Job events for the feed's `job` topic (only while ``AuthorityEngine/followsJobs``).
        package var jobEvents: [JobEvent] = []

        /// What the loop needs to refuse a request's reply: the request and the envelope's size.
        package struct RequestReply: Equatable {
            /// The request's `request_id`, the refusal's `ref`.
            package var requestID: UInt64
            /// How many leading frames of the reply are the routing envelope.
            package var envelopeCount: Int
        }

        package var isEmpty: Bool { !hasMessages && appliedPayloads.isEmpty }

        /// Whether it holds anything besides applied mutations: replies, worker messages, records
        /// or job events. Unlike ``isEmpty`` it touches no type that depends on the reactor.
        package var hasMessages: Bool {
            !replies.isEmpty || !toWorkers.isEmpty || !records.isEmpty || !promptReplies.isEmpty || !promptToWorkers.isEmpty || !jobEvents.isEmpty
        }
    }
}
