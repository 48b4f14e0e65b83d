import Coordination
import Foundation

/// What a standby writes under `/reactorbus/APP/standbys/NAME`: how far it got (the most
/// up-to-date standby campaigns first), and where it serves once promoted.
struct StandbyRegistration: Codable, Equatable {
    /// The folder of an app's standby keys.
    static func prefix(app: String) -> String { "/reactorbus/\(app)/standbys/" }

    /// The last version it applied.
    var version: UInt64
    /// The last journal record it committed (absent in registrations of older releases).
    var lsn: UInt64?
    /// Its endpoints by role (absent in registrations written before they were published).
    var endpoints: [String: String]?

    /// The standbys of `app` registered in etcd, by name in key order; entries that do not
    /// decode are skipped.
    static func all(app: String, in client: EtcdClient, timeout: Duration) throws(CoordinationError) -> [(name: String, registration: StandbyRegistration)] {
        let prefix = prefix(app: app)
        return try client.list(prefix: prefix, timeout: timeout).compactMap { entry in
            (try? JSONDecoder().decode(StandbyRegistration.self, from: entry.value)).map { (String(entry.key.dropFirst(prefix.count)), $0) }
        }
    }

    /// Whether the standby `name` registered as `self` takes over before the one `other`
    /// registered as `registration`: its journal reaches further, or as far and its name sorts
    /// first.
    ///
    /// Journals are compared by LSN, not by version: an accepted async action or a job that
    /// ended is a record that may change no version, so two standbys at one version can hold
    /// different records, and a `sync` primary acknowledged those records once one standby had
    /// them. Promoting the other would lose them, and the new primary would refuse the standby
    /// that has them (its journal ends after the primary's). A registration without an LSN (an
    /// older release) is compared by version.
    func precedes(_ registration: StandbyRegistration, name: String, other: String) -> Bool {
        let (mine, theirs) = if let lsn, let other = registration.lsn { (lsn, other) } else { (version, registration.version) }
        return mine != theirs ? mine > theirs : name < other
    }
}
