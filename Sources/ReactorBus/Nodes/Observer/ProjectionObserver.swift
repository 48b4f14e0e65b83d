import MessagePack
import ReactorCore
import ReactorLog
import ReactorWire
import ZeroMQ

/// Follows one projection of the authority's state (``Reactor/projections``) instead of the whole
/// state: its current value, then each new value, once, in version order.
///
/// It subscribes to the feed topic `projection:NAME` and to heartbeats, waits until the
/// subscription is live (a first feed message), then fetches the current state once on the
/// actions socket and computes the projection's value of it with the app's own reactor (the
/// late joiner's current value). After that it only reads the feed: the authority publishes the
/// projection when its encoded value changed. A value with a version not above the last one
/// delivered, or with the same bytes, is skipped. Like every feed message, a projection message
/// can be lost to a full feed queue; the next change brings the current value.
///
/// With several authorities (comma-separated endpoints, see ``ObserverConfiguration/feedEndpoint``)
/// the feed is connected to every feed endpoint at once, and the current state is fetched from the
/// first actions endpoint that answers.
///
/// Not thread-safe: one task calls ``next(timeout:)`` at a time.
public final class ProjectionObserver<R: Reactor> {
    /// The projection followed.
    public let name: String
    private let projection: AnyProjection<R.State>
    private let configuration: ObserverConfiguration
    private let logger: Logger
    private let context: ZMQContext
    private let feed: ZMQSocket
    private let poller = ZMQPoller()
    private var last: (version: UInt64, payload: [UInt8])?
    private var pending: [(version: UInt64, payload: [UInt8])] = []
    private var closed = false

    /// Subscribes to projection `name` of `reactor`'s app; nothing is fetched until ``next(timeout:)``.
    ///
    /// - Throws: ``ProjectionObserverError/unknownProjection(_:known:)`` when `reactor` has no
    ///   projection of that name; ``ZMQError`` when a socket cannot be made or connected.
    public init(reactor: R, projection name: String, configuration: ObserverConfiguration,
                logger: Logger = Logger(label: "observer"), context: ZMQContext) throws {
        guard let projection = reactor.projections.first(where: { $0.name == name }) else {
            throw ProjectionObserverError.unknownProjection(name, known: reactor.projections.map(\.name))
        }
        self.name = name
        self.projection = projection
        self.configuration = configuration
        self.logger = logger
        self.context = context
        feed = try ZMQSocket(context: context, type: .sub)
        do {
            try feed.set(.linger, 0)
            try feed.set(.receiveHighWaterMark, min(max(1, configuration.receiveHighWaterMark), Int(Int32.max)))
            try feed.set(.maxMessageSize, Int64(-1))
            try feed.set(.subscribe, FeedMessage.Topic.projection(name))
            try feed.set(.subscribe, FeedMessage.Topic.heartbeat)
            try configuration.security?.apply(to: feed)
            // Several authorities (a comma-separated list): the feed hears whichever publishes,
            // and values not newer than the last one are skipped anyway.
            for endpoint in AuthorityEndpoints(configuration.feedEndpoint).all { try feed.connect(endpoint) }
            _ = try poller.register(feed)
        } catch {
            feed.close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Closes the feed socket. Idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        feed.close()
    }

    /// The next value: the first call returns the current one (waiting up to `timeout` for
    /// the subscription, then fetching the state); later calls wait up to `timeout` for a change.
    /// Returns `nil` when nothing new arrived in time.
    ///
    /// - Throws: ``ClientError`` when the current state cannot be fetched, a ``ProtocolError``
    ///   with code `wrongApp` when ``ObserverConfiguration/appName`` is set and the authority
    ///   serves another app, ``ZMQError``.
    public func next(timeout: Duration) async throws -> (version: UInt64, payload: [UInt8])? {
        let deadline = ContinuousClock.now + timeout
        if last == nil {
            // Live subscription first (Clone pattern): whatever changes after the fetch arrives.
            _ = try await read(until: deadline) { !self.pending.isEmpty || self.heartbeatSeen }
            let current = try await fetchCurrent(timeout: max(.milliseconds(100), deadline - ContinuousClock.now))
            last = current
            return current
        }
        return try await read(until: deadline) { false }
    }

    /// The next value as `Value`, which must be the projection's value type.
    public func next<Value: Decodable>(as type: Value.Type, timeout: Duration) async throws -> Snapshot<Value>? {
        guard let raw = try await next(timeout: timeout) else { return nil }
        return Snapshot(version: raw.version, state: try MessagePackDecoder().decode(Value.self, from: raw.payload))
    }

    private var heartbeatSeen = false

    /// Reads the feed until a new value is there (returned) or `stop` holds or the deadline.
    private func read(until deadline: ContinuousClock.Instant, stop: () -> Bool) async throws -> (version: UInt64, payload: [UInt8])? {
        while true {
            if let value = takeNew() { return value }
            if stop() { return nil }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return nil }
            // Short polls: the task gives its thread back between them.
            if try poller.poll(timeout: Int(min(50, max(1, remaining.wholeMilliseconds)))) > 0 {
                while let frames = try feed.tryReceiveMultipart() { receive(frames) }
            } else {
                await Task.yield()
            }
        }
    }

    private func receive(_ frames: [[UInt8]]) {
        switch try? FeedMessage(frames: frames) {
        case .projection(let name, let version, _, let payload)? where name == self.name:
            pending.append((version, payload))
        case .heartbeat?:
            heartbeatSeen = true
        default:
            break
        }
    }

    /// The first pending value newer than the last delivered and different from it.
    private func takeNew() -> (version: UInt64, payload: [UInt8])? {
        guard let held = last else { return nil }
        while !pending.isEmpty {
            let value = pending.removeFirst()
            guard value.version > held.version else { continue }
            if value.payload == held.payload {
                last = (value.version, held.payload)
                continue
            }
            last = value
            return value
        }
        return nil
    }

    private func fetchCurrent(timeout: Duration) async throws -> (version: UInt64, payload: [UInt8]) {
        var client = ActionClientConfiguration(actionsEndpoint: configuration.actionsEndpoint, timeout: timeout, retries: 0, window: 1)
        client.connectTimeout = timeout
        client.security = configuration.security
        client.schema = configuration.schema
        let actions = try ActionClient<R>(configuration: client, logger: logger, context: context)
        try actions.start()
        defer { actions.close() }
        let raw = try await actions.snapshotPayload()
        if let app = configuration.appName, raw.app != app {
            throw ProtocolError(.wrongApp, "the authority at \(configuration.actionsEndpoint) runs app '\(raw.app)', not '\(app)'")
        }
        let state = try MessagePackDecoder().decode(R.State.self, from: raw.payload)
        let payload = try MessagePackEncoder().encode(projection.value(of: state))
        return (raw.version, payload)
    }
}

/// Why a ``ProjectionObserver`` cannot follow a projection.
public enum ProjectionObserverError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The app declares no projection of that name.
    case unknownProjection(String, known: [String])

    public var description: String {
        switch self {
        case .unknownProjection(let name, let known):
            "the app has no projection '\(name)'" + (known.isEmpty ? " (it declares none)" : "; its projections: \(known.joined(separator: ", "))")
        }
    }
}
