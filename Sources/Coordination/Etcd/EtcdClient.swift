import Foundation
import Synchronization

/// A client of etcd's v3 API through its JSON gateway (etcd 3.4 and later): leases, reads,
/// a create-if-absent transaction and deletes — what leader election needs, nothing more.
///
/// It takes several endpoints (the client URLs of an etcd cluster's members) and sends each
/// request to the last one that answered, moving on to the next when one cannot be reached or
/// reports that it has no leader. Every call is bounded by a timeout over all the endpoints it
/// tries. Calls block the calling thread; any thread may call at any time.
public final class EtcdClient: Sendable {
    /// The client URLs, `http://HOST:PORT`, in the order given.
    public let endpoints: [String]
    /// The longest wait for one endpoint's answer, and the default bound of a whole call.
    public let requestTimeout: Duration
    /// The index of the endpoint that answered last, where the next request starts.
    private let preferred = Atomic<Int>(0)

    /// A client of `endpoints` (`http://HOST:PORT` each; TLS is not supported).
    public init(endpoints: [String], requestTimeout: Duration = .milliseconds(500)) throws(CoordinationError) {
        guard !endpoints.isEmpty else { throw .invalidConfiguration("no etcd endpoint: give at least one http://HOST:PORT") }
        var cleaned: [String] = []
        for endpoint in endpoints {
            let trimmed = endpoint.trimmingCharacters(in: .whitespaces)
            var rest = Substring(trimmed)
            guard rest.hasPrefix("http://") else {
                throw .invalidConfiguration("etcd endpoint '\(endpoint)' is not http://HOST:PORT (https is not supported)")
            }
            rest = rest.dropFirst("http://".count)
            while rest.hasSuffix("/") { rest = rest.dropLast() }
            guard let colon = rest.lastIndex(of: ":"), colon != rest.startIndex,
                  let port = UInt16(rest[rest.index(after: colon)...]), port > 0, !rest.contains("/") else {
                throw .invalidConfiguration("etcd endpoint '\(endpoint)' is not http://HOST:PORT")
            }
            cleaned.append("http://" + rest)
        }
        guard requestTimeout > .zero else { throw .invalidConfiguration("the etcd request timeout must be positive") }
        self.endpoints = cleaned
        self.requestTimeout = requestTimeout
    }

    /// A client of a comma-separated endpoint list (`http://a:2379,http://b:2379`), as an
    /// operator writes it on a command line.
    public convenience init(endpointList: String, requestTimeout: Duration = .milliseconds(500)) throws(CoordinationError) {
        let endpoints = endpointList.split(separator: ",").map(String.init).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        try self.init(endpoints: endpoints, requestTimeout: requestTimeout)
    }

    // MARK: Leases

    /// Grants a lease of `ttlSeconds`; etcd may grant more (its minimum TTL).
    public func grantLease(ttlSeconds: Int64, timeout: Duration? = nil) throws(CoordinationError) -> EtcdLease {
        let answer = try call("/v3/lease/grant", ["TTL": String(ttlSeconds)], timeout: timeout)
        let id = try answer.int64("ID", absent: nil)
        let ttl = try answer.int64("TTL")
        guard ttl > 0 else { throw .badResponse(endpoint: answer.endpoint, detail: "granted a lease with TTL \(ttl)") }
        return EtcdLease(id: id, ttl: ttl)
    }

    /// Renews a lease to its full TTL and returns the TTL left, in seconds: 0 or less when the
    /// lease has expired or was revoked (etcd then no longer knows it).
    public func keepAlive(lease: Int64, timeout: Duration? = nil) throws(CoordinationError) -> Int64 {
        let answer = try call("/v3/lease/keepalive", ["ID": String(lease)], timeout: timeout)
        // A stream in the gateway: each message is {"result": ...} or {"error": ...}.
        if let error = try answer.object("error") {
            let code = try? error.int64("grpc_code", absent: nil)
            let message = (try? error.string("message")) ?? nil
            throw .rejected(endpoint: answer.endpoint, status: 200, code: code.map { Int($0) }, message: message ?? "keepalive failed")
        }
        guard let result = try answer.object("result") else {
            throw .badResponse(endpoint: answer.endpoint, detail: "no \"result\" in a keepalive answer")
        }
        return try result.int64("TTL")
    }

    /// Revokes a lease: the keys attached to it are deleted at once. Returns false when etcd did
    /// not know the lease (it had expired or was revoked already).
    @discardableResult
    public func revokeLease(_ lease: Int64, timeout: Duration? = nil) throws(CoordinationError) -> Bool {
        do {
            _ = try call("/v3/lease/revoke", ["ID": String(lease)], timeout: timeout)
            return true
        } catch .rejected(_, _, let code, _) where code == Self.notFound {
            return false
        }
    }

    // MARK: Keys

    /// The key's current entry, or `nil` when it does not exist.
    public func get(_ key: String, timeout: Duration? = nil) throws(CoordinationError) -> EtcdKeyValue? {
        let answer = try call("/v3/kv/range", ["key": Self.base64(key)], timeout: timeout)
        _ = try answer.headerRevision()
        return try answer.objects("kvs").first?.keyValue()
    }

    /// Every key that starts with `prefix`, in key order (etcd's `range_end` = the prefix with
    /// its last byte increased).
    public func list(prefix: String, timeout: Duration? = nil) throws(CoordinationError) -> [EtcdKeyValue] {
        var end = Array(prefix.utf8)
        guard let last = end.indices.last(where: { end[$0] < 0xFF }) else {
            throw .invalidConfiguration("cannot list the empty prefix or one of 0xFF bytes only")
        }
        end[last] += 1
        end.removeSubrange((last + 1)...)
        let request: [String: Any] = ["key": Self.base64(prefix), "range_end": Data(end).base64EncodedString()]
        let answer = try call("/v3/kv/range", request, timeout: timeout)
        _ = try answer.headerRevision()
        return try answer.objects("kvs").map { entry throws(CoordinationError) in try entry.keyValue() }
    }

    /// Writes `value` under `key` (attached to `lease` unless 0) and returns the write's revision.
    @discardableResult
    public func put(_ key: String, value: Data, lease: Int64 = 0, timeout: Duration? = nil) throws(CoordinationError) -> Int64 {
        var request: [String: Any] = ["key": Self.base64(key), "value": value.base64EncodedString()]
        if lease != 0 { request["lease"] = String(lease) }
        return try call("/v3/kv/put", request, timeout: timeout).headerRevision()
    }

    /// One transaction: if `key` does not exist, put `value` under it attached to `lease`;
    /// otherwise read it. Atomic, so of two candidates at most one creates the key.
    public func createIfAbsent(_ key: String, value: Data, lease: Int64, timeout: Duration? = nil) throws(CoordinationError) -> EtcdCreateOutcome {
        let encodedKey = Self.base64(key)
        var put: [String: Any] = ["key": encodedKey, "value": value.base64EncodedString()]
        if lease != 0 { put["lease"] = String(lease) }
        let request: [String: Any] = [
            "compare": [["target": "CREATE", "result": "EQUAL", "key": encodedKey, "create_revision": "0"]],
            "success": [["request_put": put]],
            "failure": [["request_range": ["key": encodedKey]]],
        ]
        let answer = try call("/v3/kv/txn", request, timeout: timeout)
        let revision = try answer.headerRevision()
        if try answer.bool("succeeded") { return .created(revision: revision) }
        let responses = try answer.objects("responses")
        guard let range = try responses.first?.object("response_range") else {
            throw .badResponse(endpoint: answer.endpoint, detail: "a failed create-if-absent transaction without its range answer")
        }
        guard let entry = try range.objects("kvs").first?.keyValue() else {
            throw .badResponse(endpoint: answer.endpoint, detail: "a failed create-if-absent transaction whose key is absent")
        }
        return .taken(entry)
    }

    /// Deletes `key`; returns how many keys were deleted (0 or 1).
    @discardableResult
    public func delete(_ key: String, timeout: Duration? = nil) throws(CoordinationError) -> Int64 {
        try call("/v3/kv/deleterange", ["key": Self.base64(key)], timeout: timeout).int64("deleted")
    }

    // MARK: Requests

    /// gRPC status codes etcd's gateway reports.
    static let notFound: Int = 5
    static let unavailable: Int = 14

    /// POSTs `request` to `path`, starting at the preferred endpoint and moving on while
    /// endpoints cannot be reached (or have no etcd leader), within `timeout` over all attempts.
    package func call(_ path: String, _ request: [String: Any], timeout: Duration?) throws(CoordinationError) -> EtcdJSON {
        let budget = timeout ?? requestTimeout
        let deadline = ContinuousClock.now + budget
        let body: [UInt8]
        do {
            body = Array(try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys]))
        } catch {
            throw .invalidConfiguration("a request to \(path) could not be written as JSON: \(error)")
        }
        let start = preferred.load(ordering: .relaxed)
        var lastReason = "no attempt within \(budget)"
        for attempt in 0..<endpoints.count {
            let index = (start + attempt) % endpoints.count
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            let endpoint = endpoints[index]
            guard let client = HTTPClient() else {
                throw .unreachable(endpoints: endpoints, reason: "libcurl could not make a handle")
            }
            let response: HTTPResponse
            do {
                response = try client.post(endpoint + path, body: body, timeout: min(left, requestTimeout))
            } catch {
                lastReason = error.description
                continue
            }
            if response.status == 200 {
                preferred.store(index, ordering: .relaxed)
                return try EtcdJSON(response.body, from: endpoint)
            }
            let failure = Self.failure(response, from: endpoint)
            if case .rejected(_, _, let code, let message) = failure, code == Self.unavailable {
                lastReason = "\(endpoint): \(message)"
                continue
            }
            preferred.store(index, ordering: .relaxed)
            throw failure
        }
        throw .unreachable(endpoints: endpoints, reason: lastReason)
    }

    /// The error for a non-200 answer: etcd's own error body, or a bad response.
    private static func failure(_ response: HTTPResponse, from endpoint: String) -> CoordinationError {
        guard let answer = try? EtcdJSON(response.body, from: endpoint),
              let message = (try? answer.string("message")) ?? (try? answer.string("error")) ?? nil else {
            return .badResponse(endpoint: endpoint, detail: "HTTP \(response.status) with \(EtcdJSON.excerpt(response.body))")
        }
        let code = (try? answer.int64("code", absent: nil)).map { Int($0) }
        return .rejected(endpoint: endpoint, status: response.status, code: code, message: message)
    }

    private static func base64(_ key: String) -> String { Data(key.utf8).base64EncodedString() }
}
