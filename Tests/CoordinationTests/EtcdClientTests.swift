import Coordination
import Foundation
import Testing
import TestSupport
import TestTraits

/// The etcd client's endpoints, its failover, and its errors for answers etcd never sends.
@Suite(.spawnsProcesses) struct EtcdClientTests {
    @Test func anEndpointListIsParsedAndChecked() throws {
        let client = try EtcdClient(endpointList: "http://127.0.0.1:2379, http://10.0.0.2:2379/ ,")
        #expect(client.endpoints == ["http://127.0.0.1:2379", "http://10.0.0.2:2379"])
        for bad in ["", "127.0.0.1:2379", "https://127.0.0.1:2379", "http://127.0.0.1", "http://127.0.0.1:0", "http://127.0.0.1:2379/v3"] {
            #expect(throws: CoordinationError.self, "\(bad)") { try EtcdClient(endpointList: bad) }
        }
        #expect(throws: CoordinationError.invalidConfiguration("etcd endpoint 'https://a:1' is not http://HOST:PORT (https is not supported)")) {
            try EtcdClient(endpointList: "https://a:1")
        }
    }

    @Test func anElectionRefusesSettingsThatCannotWork() throws {
        let client = try EtcdClient(endpoints: ["http://127.0.0.1:2379"])
        let bad = [
            LeaderElectionConfiguration(app: ""), LeaderElectionConfiguration(app: "a/b"),
            LeaderElectionConfiguration(app: "tally", ttlSeconds: 0),
            LeaderElectionConfiguration(app: "tally", ttlSeconds: 3, safetyMargin: .seconds(2)),
            LeaderElectionConfiguration(app: "tally", safetyMargin: .zero),
            LeaderElectionConfiguration(app: "tally", renewalInterval: .zero),
            // No time left to retry a renewal before the fence.
            LeaderElectionConfiguration(app: "tally", ttlSeconds: 2, safetyMargin: .milliseconds(500), renewalInterval: .milliseconds(1_500)),
            LeaderElectionConfiguration(app: "tally", pollInterval: .zero),
        ]
        for configuration in bad {
            #expect(throws: CoordinationError.self, "\(configuration)") { try LeaderElection(client: client, configuration: configuration) }
        }
        let good = try LeaderElection(client: client, configuration: LeaderElectionConfiguration(app: "tally"))
        #expect(good.key == "/reactorbus/tally/leader")
        #expect(good.configuration.effectiveSafetyMargin == .milliseconds(500))
        #expect(good.configuration.effectiveRenewalInterval == .seconds(1))
        // Renewing every third of the TTL, as etcd's own sessions do, is allowed too.
        _ = try LeaderElection(client: client, configuration: LeaderElectionConfiguration(app: "tally", ttlSeconds: 3, safetyMargin: .seconds(1),
                                                                                       renewalInterval: .seconds(1)))
    }

    @Test func noLiveEndpointIsUnreachableNamingThemAll() throws {
        let endpoints = [try deadEndpoint(), try deadEndpoint()]
        let client = try EtcdClient(endpoints: endpoints, requestTimeout: .milliseconds(300))
        let started = ContinuousClock.now
        do {
            _ = try client.get("/k")
            Issue.record("a read with no etcd succeeded")
        } catch .unreachable(let named, let reason) {
            #expect(named == endpoints)
            #expect(reason.contains(endpoints[1]), "\(reason)")
        } catch {
            Issue.record("expected unreachable, got \(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(CoordinationError.unreachable(endpoints: endpoints, reason: "x").description.contains("check that etcd runs"))
    }

    @Test func theNextEndpointAnswersWhenTheFirstIsDead() async throws {
        let etcd = try await EtcdServer.start()
        let dead = try deadEndpoint()
        let client = try EtcdClient(endpointList: "\(dead),\(etcd.clientURL)")
        let revision = try client.put("/k", value: Data("v".utf8))
        let entry = try #require(try client.get("/k"))
        #expect(entry == EtcdKeyValue(key: "/k", value: Data("v".utf8), createRevision: revision, modRevision: revision, version: 1, lease: 0))
        let lease = try client.grantLease(ttlSeconds: 5)
        #expect(lease.ttl == 5)
        #expect(try client.keepAlive(lease: lease.id) == 5)
        #expect(try client.createIfAbsent("/k", value: Data("w".utf8), lease: lease.id) == .taken(entry))
        guard case .created(let created) = try client.createIfAbsent("/other", value: Data("w".utf8), lease: lease.id) else {
            Issue.record("an absent key was not created")
            return
        }
        #expect(created > revision)
        #expect(try client.get("/other")?.createRevision == created)
        #expect(try client.revokeLease(lease.id))
        #expect(try client.get("/other") == nil)
        #expect(try client.revokeLease(lease.id) == false)
        #expect(try client.keepAlive(lease: lease.id) == 0)
        #expect(try client.delete("/k") == 1)
        #expect(try client.delete("/k") == 0)
    }

    @Test func aPrefixListsItsKeysInOrderAndNothingElse() async throws {
        let etcd = try await EtcdServer.start()
        let client = try EtcdClient(endpointList: etcd.clientURL)
        for key in ["/app/standbys/b", "/app/standbys/a", "/app/standbyz", "/app/standby", "/app/leader"] {
            try client.put(key, value: Data(key.utf8))
        }
        #expect(try client.list(prefix: "/app/standbys/").map(\.key) == ["/app/standbys/a", "/app/standbys/b"])
        #expect(try client.list(prefix: "/app/standby").map(\.key) == ["/app/standby", "/app/standbys/a", "/app/standbys/b", "/app/standbyz"])
        #expect(try client.list(prefix: "/other/").isEmpty)
        #expect(throws: CoordinationError.self) { try client.list(prefix: "") }
    }

    /// Answers etcd never sends, each to the call it breaks, and the error expected.
    @Test(arguments: [
        (200, "not json", "get", "not JSON: 'not json'"),
        (200, "[1, 2]", "get", "not a JSON object: '[1, 2]'"),
        (200, "{}", "get", "no \"header\" field"),
        (200, #"{"header":{"revision":"x"}}"#, "get", "\"revision\" is not an integer"),
        (200, #"{"header":{"revision":"3"},"kvs":[{"key":"%%%"}]}"#, "get", "\"key\" is not base64"),
        (200, #"{"header":{"revision":"3"},"kvs":{"key":"a2V5"}}"#, "get", "\"kvs\" is not an array"),
        (200, #"{"ID":"abc","TTL":"2"}"#, "grant", "\"ID\" is not an integer"),
        (200, #"{"ID":"7","TTL":2.5}"#, "grant", "\"TTL\" is not an integer"),
        (200, #"{"ID":"7"}"#, "grant", "granted a lease with TTL 0"),
        (200, #"{"header":{"revision":"3"}}"#, "txn", "a failed create-if-absent transaction without its range answer"),
        (200, #"{"header":{"revision":"3"},"succeeded":"yes"}"#, "txn", "\"succeeded\" is not a boolean"),
        (200, #"{"header":{}}"#, "keepalive", "no \"result\" in a keepalive answer"),
        (500, "<html>oops</html>", "get", "HTTP 500 with '<html>oops</html>'"),
    ])
    func aMalformedAnswerIsABadResponse(status: Int, body: String, call: String, detail: String) throws {
        let server = try CannedHTTPServer(status: status, body: body)
        defer { server.stop() }
        let client = try EtcdClient(endpoints: [server.url])
        #expect(throws: CoordinationError.badResponse(endpoint: server.url, detail: detail)) {
            try Self.run(call, on: client)
        }
        #expect(server.requests == 1)
    }

    @Test func etcdsOwnErrorsAreRefusals() throws {
        let refusal = try CannedHTTPServer(status: 400, body: #"{"error":"bad key","message":"bad key","code":3}"#)
        defer { refusal.stop() }
        #expect(throws: CoordinationError.rejected(endpoint: refusal.url, status: 400, code: 3, message: "bad key")) {
            try EtcdClient(endpoints: [refusal.url]).get("/k")
        }
        let keepalive = try CannedHTTPServer(status: 200, body: #"{"error":{"grpc_code":5,"http_code":404,"message":"lease not found"}}"#)
        defer { keepalive.stop() }
        #expect(throws: CoordinationError.rejected(endpoint: keepalive.url, status: 200, code: 5, message: "lease not found")) {
            try EtcdClient(endpoints: [keepalive.url]).keepAlive(lease: 7)
        }
    }

    @Test func aMemberWithoutLeaderIsSkippedForTheNext() async throws {
        let noLeader = try CannedHTTPServer(status: 503, body: #"{"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14}"#)
        defer { noLeader.stop() }
        let etcd = try await EtcdServer.start()
        let client = try EtcdClient(endpoints: [noLeader.url, etcd.clientURL])
        #expect(try client.get("/k") == nil)
        #expect(noLeader.requests == 1)
        // The member that answered is tried first from then on.
        #expect(try client.get("/k") == nil)
        #expect(noLeader.requests == 1)
    }

    @Test func anObserverReportsARunOfFailedReadsOnce() throws {
        let server = try CannedHTTPServer(status: 200, body: "not json")
        defer { server.stop() }
        let election = try LeaderElection(client: EtcdClient(endpoints: [server.url]),
                                          configuration: LeaderElectionConfiguration(app: "tally", pollInterval: .milliseconds(10)))
        let errors = Box<[CoordinationError]>([])
        let changes = Box(0)
        let observer = election.observe(onChange: { _ in changes.value += 1 }, onError: { errors.value.append($0) })
        let deadline = ContinuousClock.now + promptly
        while server.requests < 5 && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
        observer.stop()
        let polls = server.requests
        #expect(polls >= 5)
        #expect(errors.value == [.badResponse(endpoint: server.url, detail: "not JSON: 'not json'")])
        #expect(changes.value == 0)
        #expect(observer.latest == nil)
        // Stopped means stopped: no read after stop() returned.
        #expect(server.requests == polls)
    }

    static func run(_ call: String, on client: EtcdClient) throws(CoordinationError) {
        switch call {
        case "get": _ = try client.get("/k")
        case "grant": _ = try client.grantLease(ttlSeconds: 2)
        case "txn": _ = try client.createIfAbsent("/k", value: Data("v".utf8), lease: 7)
        default: _ = try client.keepAlive(lease: 7)
        }
    }
}
