import Glibc
import MessagePack
import MetricsHTTP
import ReactorBus
import ReactorCore
import Synchronization

/// The inspector's HTTP surface: the page, its JSON endpoints and the event stream. Answers on
/// the HTTP server's connection threads from what ``InspectorHistory`` holds (and, for versions
/// outside its window, from the data directory); nothing here talks to the cluster.
///
/// | path | answer |
/// | --- | --- |
/// | `/` | the page (HTML, CSS and JS embedded in the binary) |
/// | `/api/summary` | app, sources, live version, window, workers and observers |
/// | `/api/state` | the live state: `{"version","action_seq","state"}` |
/// | `/api/state/V` | the state at version V (time travel), with `"source"`: `memory` or `journal` |
/// | `/api/actions` | the newest actions, newest first |
/// | `/api/actions/A` | one action: its mutations, jobs, the state before it and the diff |
/// | `/api/stats` | throughput and ack latency per stats poll, for the charts |
/// | `/api/events` | server-sent events: `update` whenever something changed |
struct InspectorRoutes<R: Reactor>: Sendable {
    let app: String
    let feed: String?
    let actionsEndpoint: String?
    let history: InspectorHistory<R>
    let journal: InspectorJournal<R>?
    /// Actions listed by `/api/actions`.
    var listed = 200

    func reply(_ request: HTTPRequest) -> HTTPReply {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .whole(MetricsHTTPResponse(status: 405, body: "method not allowed: the inspector only reads; use GET\n", headers: ["Allow": "GET, HEAD"]))
        }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch parts.first {
        case nil:
            return .whole(MetricsHTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: InspectorPage.html))
        case "api" where parts.count >= 2:
            return api(Array(parts.dropFirst()))
        default:
            return notFound(request.path)
        }
    }

    private func api(_ parts: [String]) -> HTTPReply {
        switch (parts[0], parts.count) {
        case ("summary", 1): return json(summary())
        case ("state", 1): return liveState()
        case ("state", 2):
            guard let version = UInt64(parts[1]) else { return error(400, "'\(parts[1])' is not a state version (0 or more)") }
            return state(at: version)
        case ("actions", 1): return json(.array(history.actions(last: listed).map(actionLine)))
        case ("actions", 2):
            guard let seq = UInt64(parts[1]) else { return error(400, "'\(parts[1])' is not an action sequence number") }
            return actionDetail(seq)
        case ("stats", 1): return json(stats())
        case ("events", 1): return events()
        default: return notFound("/api/" + parts.joined(separator: "/"))
        }
    }

    // MARK: Endpoints

    private func summary() -> MessagePackValue {
        let summary = history.summary
        let last = history.stats.last?.counters ?? [:]
        func gauge(_ name: String) -> MessagePackValue { last[name].map { .uint($0) } ?? .nil }
        return .object([
            ("app", .string(app)),
            ("feed", feed.map { .string($0) } ?? .nil),
            ("actions_endpoint", actionsEndpoint.map { .string($0) } ?? .nil),
            ("data", journal.map { .string($0.directory) } ?? .nil),
            ("version", summary.version.map { .uint($0) } ?? .nil),
            ("action_seq", summary.actionSeq.map { .uint($0) } ?? .nil),
            ("oldest_version", summary.oldestVersion.map { .uint($0) } ?? .nil),
            ("generation", .uint(summary.generation)),
            ("waiting_for_snapshot", .bool(summary.awaitingSnapshot)),
            ("refetches", .uint(summary.refetches)),
            ("malformed", .uint(summary.malformed)),
            ("kept", .object([("mutations", .uint(UInt64(summary.mutationsKept))), ("actions", .uint(UInt64(summary.actionsKept))),
                              ("checkpoints", .uint(UInt64(summary.checkpointsKept)))])),
            ("limits", .object([("versions", .uint(UInt64(history.limits.versions))), ("actions", .uint(UInt64(history.limits.actions))),
                                ("checkpoint_every", .uint(UInt64(history.limits.checkpointEvery))),
                                ("stats_samples", .uint(UInt64(history.limits.statsSamples)))])),
            ("workers", gauge("workers")), ("quarantined_workers", gauge("quarantined_workers")), ("observers", gauge("observers")),
            ("open_jobs", gauge("open_jobs")), ("queued_jobs", gauge("queued_jobs")), ("clients", gauge("clients")),
        ])
    }

    private func liveState() -> HTTPReply {
        guard let current = history.current else { return error(503, "no state yet: waiting for the authority's snapshot") }
        return json(.object([("version", .uint(current.version)), ("action_seq", .uint(current.actionSeq)), ("state", Self.value(current.state))]))
    }

    private func state(at version: UInt64) -> HTTPReply {
        if let rebuilt = history.state(at: version) {
            return json(.object([("version", .uint(rebuilt.version)), ("action_seq", .uint(rebuilt.actionSeq)), ("state", Self.value(rebuilt.state)),
                                 ("source", .string("memory"))]))
        }
        guard let journal else {
            let summary = history.summary
            let window = summary.oldestVersion.map { "\($0) to \(summary.version ?? $0)" } ?? "none yet"
            return error(404, "version \(version) is not in the inspector's window (versions \(window)); start it with --data DIR to reach every version the data directory holds")
        }
        do {
            let rebuilt = try journal.state(at: version)
            return json(.object([("version", .uint(rebuilt.version)), ("action_seq", .uint(rebuilt.actionSeq)), ("state", Self.value(rebuilt.state)),
                                 ("source", .string("journal"))]))
        } catch {
            return self.error(404, "version \(version): \(error)")
        }
    }

    private func actionLine(_ entry: InspectorHistory<R>.ActionEntry) -> MessagePackValue {
        let versions = entry.versions
        return .object([
            ("action_seq", .uint(entry.actionSeq)),
            ("action", entry.action ?? .nil),
            ("seen_at_ms", .double(entry.firstSeenAt)),
            ("sync_mutations", .uint(UInt64(entry.sync.count))),
            ("jobs", .uint(UInt64(entry.jobs.count))),
            ("mutations", .uint(UInt64(versions.count))),
            ("first_version", versions.first.map { .uint($0) } ?? .nil),
            ("last_version", versions.last.map { .uint($0) } ?? .nil),
            ("duration_ms", .double(max(0, entry.lastAt - entry.firstSeenAt))),
        ])
    }

    private func actionDetail(_ seq: UInt64) -> HTTPReply {
        guard let entry = history.action(seq) else {
            return error(404, "action \(seq) is not in the inspector's log (it keeps the newest \(history.limits.actions); --keep-actions changes that)")
        }
        let versions = entry.versions
        var mutations = history.mutations(at: versions)
        if mutations.count != versions.count, let journal, let replayed = try? journal.mutations(at: versions), replayed.count == versions.count {
            mutations = replayed
        }
        func line(_ mutation: InspectorHistory<R>.Recorded) -> MessagePackValue {
            let (origin, index): (String, UInt32) = switch mutation.origin {
            case .sync(let index): ("sync", index)
            case .async(_, let index): ("async", index)
            case .failure(_, let index): ("failure", index)
            case .cancelled(_, let index): ("cancelled", index)
            }
            return .object([("version", .uint(mutation.version)), ("origin", .string(origin)), ("index", .uint(UInt64(index))),
                            ("mutation", Self.value(mutation.mutation))])
        }
        let jobs: [MessagePackValue] = entry.jobs.values.sorted { $0.effectIndex < $1.effectIndex }.map { job in
            .object([
                ("job", .string("\(seq).\(job.effectIndex)")),
                ("effect_index", .uint(UInt64(job.effectIndex))),
                // From the authority's job events, while the inspector follows them.
                ("worker", job.worker.map { .string($0) } ?? .nil),
                ("dispatches", job.dispatches.map { .uint(UInt64($0)) } ?? .nil),
                ("attempts", job.attempts.map { .uint(UInt64($0)) } ?? .nil),
                ("duration_ms", job.microseconds.map { .double(Double($0) / 1_000) } ?? .nil),
                ("outcome", job.outcome.map { .string($0) } ?? .nil),
                ("seen_after_ms", .double(max(0, job.lastAt - entry.firstSeenAt))),
                ("mutations", .array(mutations.filter { job.versions.contains($0.version) }.map(line))),
            ])
        }
        var fields: [(String, MessagePackValue)] = [
            ("action_seq", .uint(seq)),
            ("action", entry.action ?? .nil),
            ("seen_at_ms", .double(entry.firstSeenAt)),
            ("mutations", .array(mutations.filter { entry.sync.contains($0.version) }.map(line))),
            ("jobs", .array(jobs)),
            ("complete", .bool(mutations.count == versions.count)),
        ]
        // Before: the state just before its first mutation; after: that state with only this
        // action's mutations applied, so that the diff shows what this action did.
        if let first = versions.first, mutations.count == versions.count, let before = stateBefore(first) {
            var after = before.state
            for mutation in mutations { history.reactor.reduce(state: &after, mutation: mutation.mutation) }
            let (old, new) = (Self.value(before.state), Self.value(after))
            fields += [
                ("before", .object([("version", .uint(before.version)), ("state", old)])),
                ("after", .object([("state", new)])),
                ("diff", .array(JSONDiff.changes(from: old, to: new).map { change in
                    .object([("path", .string(change.path)), ("before", change.before ?? .nil), ("after", change.after ?? .nil)])
                })),
            ]
        } else {
            fields += [("before", .nil), ("after", .nil), ("diff", .array([]))]
        }
        return json(.object(fields))
    }

    private func stateBefore(_ version: UInt64) -> (version: UInt64, state: R.State)? {
        guard version > 0 else { return nil }
        if let kept = history.state(at: version - 1) { return (kept.version, kept.state) }
        if let journal, let rebuilt = try? journal.state(at: version - 1) { return (rebuilt.version, rebuilt.state) }
        return nil
    }

    /// Per poll: actions applied and mutations per second, and the mean ack latency in
    /// milliseconds over the poll's interval (`null` without acks).
    private func stats() -> MessagePackValue {
        let samples = history.stats
        var points: [MessagePackValue] = []
        for (previous, sample) in zip(samples, samples.dropFirst()) {
            let seconds = (sample.at - previous.at) / 1_000
            guard seconds > 0 else { continue }
            func delta(_ name: String) -> Double {
                let (a, b) = (previous.counters[name] ?? 0, sample.counters[name] ?? 0)
                return b >= a ? Double(b - a) : 0
            }
            let acks = delta("ack_latency_count")
            points.append(.object([
                ("t", .double(sample.at)),
                ("applied_per_second", .double(delta("actions_applied") / seconds)),
                ("mutations_per_second", .double(delta("mutations_applied") / seconds)),
                ("ack_latency_ms", acks > 0 ? .double(delta("ack_latency_microseconds") / acks / 1_000) : .nil),
            ]))
        }
        return .object([("points", .array(points)), ("latest", .object((samples.last?.counters ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, .uint($0.value)) }))])
    }

    /// An `update` event when the history has changed, at most every 100 ms per stream, so the
    /// page refetches what it shows; a client that reads slowly only ever gets the newest.
    private func events() -> HTTPReply {
        let sent = EventCursor()
        let history = history
        return .eventStream {
            for _ in 0..<20 {
                let generation = history.generation
                if sent.advance(to: generation, spacing: .milliseconds(100)) {
                    let summary = history.summary
                    let data = MessagePackValue.object([("generation", .uint(generation)), ("version", summary.version.map { .uint($0) } ?? .nil),
                                                        ("action_seq", summary.actionSeq.map { .uint($0) } ?? .nil)]).jsonText()
                    return "event: update\ndata: \(data)\n\n"
                }
                usleep(50_000)
            }
            return ""
        }
    }

    // MARK: Helpers

    static func value<T: Encodable>(_ value: T) -> MessagePackValue {
        (try? MessagePackValue(unpacking: MessagePackEncoder().encode(value))) ?? .nil
    }

    private func json(_ value: MessagePackValue) -> HTTPReply {
        .whole(MetricsHTTPResponse(status: 200, contentType: "application/json", body: value.jsonText() + "\n"))
    }

    private func error(_ status: Int, _ message: String) -> HTTPReply {
        .whole(MetricsHTTPResponse(status: status, contentType: "application/json", body: MessagePackValue.object([("error", .string(message))]).jsonText() + "\n"))
    }

    private func notFound(_ path: String) -> HTTPReply {
        error(404, "not found: \(path); the page is at /, the JSON under /api/ (summary, state, state/VERSION, actions, actions/SEQ, stats, events)")
    }
}

/// The last generation one event stream sent, and when.
private final class EventCursor: Sendable {
    private let sent = Mutex<(generation: UInt64, at: ContinuousClock.Instant)?>(nil)

    /// Whether `generation` is new to this stream and the last event is at least `spacing` old
    /// (and if so, notes it as sent now).
    func advance(to generation: UInt64, spacing: Duration) -> Bool {
        let now = ContinuousClock.now
        return sent.withLock { sent in
            if let last = sent, last.generation == generation || now - last.at < spacing { return false }
            sent = (generation, now)
            return true
        }
    }
}
