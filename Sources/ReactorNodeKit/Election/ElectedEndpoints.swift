import ArgumentParsing
import Coordination
import Foundation

/// The endpoints of an app's elected authorities, read from etcd: what `send`, `observe` and
/// `worker` use with `--election URLS` instead of listing the authorities themselves.
///
/// The elected primary publishes its endpoints under the leader key and each standby under
/// `/reactorbus/APP/standbys/NAME` (``ElectedAuthority``). The lists put the primary first, then
/// the standbys by name, so a node talks to the primary and, when it loses it, moves to the
/// standbys in a fixed order until it finds the one promoted (as with endpoints given by hand).
/// They are read once, when the node starts: a candidate started later is not in them.
struct ElectedEndpoints: Equatable {
    /// Each candidate's endpoints by role (`actions`, `workers`, `feed`), the primary first.
    let candidates: [[String: String]]

    /// For each of `roles`, the comma-separated list of the candidates' endpoints, in order, over
    /// the candidates that publish every one of the roles (so the lists line up: an observer's
    /// n-th feed and n-th actions endpoint are one authority's); each candidate once.
    func lists(_ roles: [String]) -> [String]? {
        var seen: Set<[String]> = []
        let rows = candidates.compactMap { endpoints -> [String]? in
            let row = roles.compactMap { endpoints[$0] }
            return row.count == roles.count && seen.insert(row).inserted ? row : nil
        }
        guard !rows.isEmpty else { return nil }
        return roles.indices.map { index in rows.map { $0[index] }.joined(separator: ",") }
    }

    /// The endpoint lists for `roles` from `--election URLS` (then none of `flags`, the options
    /// that give them by hand, may be given too), or `nil` without `--election`.
    static func lists(_ roles: [String], _ arguments: ParsedArguments, app: String, replacing flags: [String]) throws -> [String]? {
        guard let urls = arguments.string("election") else { return nil }
        if let given = flags.first(where: { arguments.isGiven($0) }) {
            throw CLIError.usage("\(arguments.command): give --election or --\(given), not both (--election reads the authorities' endpoints from etcd)")
        }
        let found = try read(app: app, urls: urls, command: arguments.command)
        guard let lists = found.lists(roles) else {
            throw CLIError.unavailable("\(arguments.command): the authorities of \(app) registered in etcd at \(urls) publish no \(roles.joined(separator: " and ")) endpoint")
        }
        return lists
    }

    /// Reads the app's candidates from the etcd cluster at `urls` (comma-separated).
    ///
    /// - Throws: ``CLIError/usage(_:)`` for a bad URL list, ``CLIError/unavailable(_:)`` when etcd
    ///   cannot be read or no authority of the app is registered there.
    static func read(app: String, urls: String, command: String, timeout: Duration = .seconds(5)) throws -> ElectedEndpoints {
        let client: EtcdClient
        let election: LeaderElection
        do {
            client = try EtcdClient(endpointList: urls)
            election = try LeaderElection(client: client, configuration: LeaderElectionConfiguration(app: app))
        } catch {
            throw CLIError.usage("\(command): --election \(urls): \(error)")
        }
        var candidates: [[String: String]] = []
        do {
            if let leader = try election.currentLeader(timeout: timeout) { candidates.append(leader.info.endpoints) }
            for standby in try StandbyRegistration.all(app: app, in: client, timeout: timeout) {
                candidates.append(standby.registration.endpoints ?? [:])
            }
        } catch {
            throw CLIError.unavailable("\(command): cannot read the authorities of \(app) from etcd at \(urls): \(error)")
        }
        let found = ElectedEndpoints(candidates: candidates.filter { !$0.isEmpty })
        guard !found.candidates.isEmpty else {
            throw CLIError.unavailable("\(command): no authority of app \(app) is registered in etcd at \(urls): start them with 'authority --election \(urls)', or give the endpoints instead of --election")
        }
        return found
    }
}
