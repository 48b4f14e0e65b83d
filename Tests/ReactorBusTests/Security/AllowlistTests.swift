import Foundation
@testable import ReactorBus
import Testing
import ZeroMQ

/// Who each of the authority's sockets admits: the client sockets any key without a directory
/// and the listed keys with one; the replication socket never any key, only the authority's own
/// and those under `replication/`.
@Suite struct AllowlistTests {
    let own: String
    let other: String
    let listed: String

    init() throws {
        own = try ZMQCurve.generateKeyPair().publicKey
        other = try ZMQCurve.generateKeyPair().publicKey
        listed = try ZMQCurve.generateKeyPair().publicKey
    }

    @Test func withoutADirectoryOnlyTheReplicationSocketChecksKeys() {
        let allowlist = Allowlist(directory: nil, authorityKey: own)
        for domain in ["actions", "workers", "feed"] {
            #expect(allowlist.allows(other, domain: domain, now: 0))
        }
        #expect(allowlist.allows(own, domain: "replication", now: 0))
        #expect(!allowlist.allows(other, domain: "replication", now: 0))
    }

    @Test func withADirectoryEachSocketAdmitsItsListedKeysAndReplicationAlsoTheAuthoritys() throws {
        let directory = NSTemporaryDirectory() + "reactorbus-allow-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for domain in Allowlist.domains {
            try FileManager.default.createDirectory(atPath: directory + "/" + domain, withIntermediateDirectories: true)
        }
        try listed.write(toFile: directory + "/replication/standby.pub", atomically: true, encoding: .utf8)
        try listed.write(toFile: directory + "/feed/observer.pub", atomically: true, encoding: .utf8)
        let allowlist = Allowlist(directory: directory, authorityKey: own)
        #expect(allowlist.counts == ["actions": 0, "workers": 0, "feed": 1, "replication": 1])
        #expect(allowlist.allows(listed, domain: "feed", now: 0))
        #expect(!allowlist.allows(listed, domain: "actions", now: 0))
        #expect(!allowlist.allows(own, domain: "actions", now: 0), "the authority's key is no client key")
        #expect(allowlist.allows(own, domain: "replication", now: 0))
        #expect(allowlist.allows(listed, domain: "replication", now: 0))
        #expect(!allowlist.allows(other, domain: "replication", now: 0))
    }
}
