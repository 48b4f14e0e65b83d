/// How an ``Observer`` follows the authority.
public struct ObserverConfiguration: Sendable {
    /// The authority's feed endpoint (its PUB socket); or several, separated by commas, when
    /// standby authorities can take over: then ``actionsEndpoint`` lists as many, in the same
    /// order (the i-th feed and the i-th actions endpoint are one authority's). The observer
    /// follows the first; when its feed has been silent for ``silenceTimeout`` it moves to the
    /// next pair, round robin, and fetches the snapshot there.
    public var feedEndpoint: String
    /// The authority's actions endpoint, where snapshots are fetched; one per feed endpoint.
    public var actionsEndpoint: String
    /// How long a snapshot fetch may stay unanswered before it is asked again.
    public var requestTimeout: Duration
    /// The most feed messages queued for this observer. Bounded, so a slow observer loses feed
    /// messages (and catches up by refetching) instead of making the authority buffer for it.
    public var receiveHighWaterMark: Int
    /// Whether to subscribe to `mutation` too; a gap in mutation versions then triggers a refetch.
    /// (An observer created with the reactor always follows mutations, and applies them.)
    public var followMutations: Bool
    /// A feed without any message for this long means a dead or restarted authority: refetch.
    /// The authority publishes a heartbeat at least once a second, so the default is 3 s.
    public var silenceTimeout: Duration
    /// Snapshots buffered per stream for a consumer that is behind. When full, the oldest is
    /// dropped (bounded-newest): every snapshot holds the whole state, so a slow consumer skips
    /// intermediate versions but never sees an old state after a newer one.
    public var streamBufferSize: Int
    /// The largest answer accepted on the actions socket; snapshots are fetched in chunks of at
    /// most this size (and 1 MiB), so it does not bound the state. Feed messages are not limited.
    /// Default 1 MiB.
    public var maxMessageBytes: Int
    /// CURVE keys for talking to an authority that has CURVE on; `nil` for plain text.
    public var security: ClientSecurity? = nil
    /// The app this observer expects. A snapshot from an authority that serves another app stops
    /// the observer with a `wrong_app` ``ProtocolError`` (``Observer/failure``) before anything of
    /// it is delivered; `nil` accepts any app.
    public var appName: String? = nil
    /// The app's schema this observer reads. Before its first snapshot it asks the authority's
    /// version (a `ping`); one that neither side declares compatible stops the observer with a
    /// `wrong_app` ``ProtocolError``; `nil` accepts any version.
    public var schema: AppSchema? = nil

    /// Creates a configuration with the documented defaults.
    public init(
        feedEndpoint: String,
        actionsEndpoint: String,
        requestTimeout: Duration = .seconds(5),
        receiveHighWaterMark: Int = 1_000,
        followMutations: Bool = false,
        silenceTimeout: Duration = .seconds(3),
        streamBufferSize: Int = 64,
        maxMessageBytes: Int = 1 << 20
    ) {
        self.feedEndpoint = feedEndpoint
        self.actionsEndpoint = actionsEndpoint
        self.requestTimeout = requestTimeout
        self.receiveHighWaterMark = receiveHighWaterMark
        self.followMutations = followMutations
        self.silenceTimeout = silenceTimeout
        self.streamBufferSize = streamBufferSize
        self.maxMessageBytes = maxMessageBytes
    }
}

/// What an ``Observer`` has seen so far; read with ``Observer/metrics`` from any thread.
public struct ObserverMetrics: Sendable, Hashable, CustomStringConvertible {
    /// Well-formed snapshots received, from the feed and from fetches.
    public var snapshotsReceived: UInt64 = 0
    /// Snapshots delivered to the streams (each newer than the one before).
    public var snapshotsDelivered: UInt64 = 0
    /// Snapshots not delivered because their version was not newer than the one held.
    public var staleIgnored: UInt64 = 0
    /// Fetches after the first one: after heartbeats showed a newer version, a mutation gap or a silent feed.
    public var refetches: UInt64 = 0
    /// Fetch attempts that timed out and were asked again.
    public var fetchTimeouts: UInt64 = 0
    /// Heartbeats received.
    public var heartbeats: UInt64 = 0
    /// Mutations received (only with ``ObserverConfiguration/followMutations``).
    public var mutations: UInt64 = 0
    /// Feed messages or answers that did not decode, and snapshots whose state did not decode; dropped.
    public var malformed: UInt64 = 0
    /// Moves to the next of several authorities (feed and actions endpoints) after a silent feed.
    public var failovers: UInt64 = 0

    public init() {}

    public var description: String {
        "snapshots \(snapshotsReceived) received, \(snapshotsDelivered) delivered, \(staleIgnored) stale; "
            + "\(refetches) refetches, \(fetchTimeouts) fetch timeouts, \(heartbeats) heartbeats, \(mutations) mutations, \(malformed) malformed"
            + (failovers > 0 ? ", \(failovers) failovers" : "")
    }
}
