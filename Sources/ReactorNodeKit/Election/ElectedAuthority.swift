import Coordination
import Foundation
import MetricsHTTP
import ReactorBus
import ReactorCore
import ReactorLog
import Synchronization
import ZeroMQ

/// An authority under an etcd election (`reactor-node authority --election`): the primary while
/// it holds the app's leader key, a standby of the current primary otherwise, promoted when the
/// primary's lease ends and it is the most up-to-date standby.
///
/// - **Primary.** Wins the key (`LeaderElection.campaign`), is granted its term (the key's
///   create revision) in the authority's ``Leadership``, and serves. The authority checks the
///   lease on its own clock before every ack, job and feed message (fencing); when the lease is
///   lost it sends nothing more and stops, and this process exits 75.
/// - **Standby.** Follows the replication endpoint the primary published, and says how far it got
///   and where it serves once promoted under `/reactorbus/APP/standbys/NAME` (a key on a lease of
///   its own; ``StandbyRegistration``, read by nodes started with `--election`). When the leader key is
///   gone, the standby whose journal reaches furthest campaigns at once; the others campaign only
///   when no live registration reaches further than theirs (a standby that died is passed over
///   once its lease ends). The winner is promoted in place; the others follow it.
/// - **Deposed.** A data directory that was primary in an older term than the current leader's
///   is refused as a standby (its last records may be ones the new primary never had): start it
///   on an empty directory to rejoin.
struct ElectedAuthority<R: Reactor> {
    let reactor: R
    /// The authority's configuration: `--data`, `--replication` (bound), the endpoints it serves
    /// once primary.
    let configuration: AuthorityConfiguration
    let election: LeaderElection
    let client: EtcdClient
    /// This candidate: its name and the endpoints others reach it at.
    let candidate: LeaderInfo
    let ttl: Duration
    let logger: Logger
    let metrics: MetricsAddress?
    /// Set by SIGINT/SIGTERM.
    let stopping: ElectionStop
    /// The node running now, for the metrics endpoint.
    let nodes: CurrentNode<R>

    private var standbyKey: String { StandbyRegistration.prefix(app: configuration.appName) + candidate.name }
    private var termFile: String? { configuration.persistence.map { $0.directory + "/elected-term" } }

    /// What a spell as standby ended with.
    private enum StandbyOutcome {
        case promoted
        case leaderChanged
        case stopped
    }

    /// Runs until stopped (exit 0) or deposed (throws ``CLIError``, exit 75).
    func run() async throws -> Int32 {
        while !stopping.isSet {
            let leader = try await blocking { try election.currentLeader() }
            if let leader, leader.info.name != candidate.name {
                try refuseIfDeposed(by: leader)
                switch try await standby(of: leader) {
                case .promoted, .stopped: return 0
                case .leaderChanged: continue
                }
            }
            // No leader (or a key of this candidate's previous run, left to expire): campaign.
            let won: (term: LeaderTerm, watch: LossWatch)?
            do {
                won = try await campaign(for: ttl * 3)
            } catch CoordinationError.cancelled {
                return 0
            }
            guard let won else { continue }
            return try await primary(term: won.term, watch: won.watch, node: nil)
        }
        return 0
    }

    // MARK: Primary

    /// Serves as primary in `term`: starts a node (or takes the promoted `node`), then waits for
    /// a stop or the loss of the lease.
    private func primary(term: LeaderTerm, watch: LossWatch, node promoted: AuthorityNode<R>?) async throws -> Int32 {
        let epoch = UInt64(term.epoch)
        let node: AuthorityNode<R>
        if let promoted {
            node = promoted
        } else {
            var primary = configuration
            primary.replication?.standbyOf = nil
            primary.leadership = Leadership()
            primary.leadership?.grant(term: epoch) { term.isLeader }
            node = try makeNode(primary)
            let endpoints = try await start(node)
            Output.endpoints(endpoints, metrics: metrics)
        }
        // Noted once the node runs (its data directory exists): a later start refuses to follow
        // a newer primary with this directory.
        try recordTerm(epoch)
        logger.notice("primary of \(configuration.appName) in term \(epoch) (lease \(term.lease.ttl) s)")
        watch.onLoss { loss in
            logger.error("leadership of term \(epoch) lost (\(loss)): stopping without sending anything more")
            node.stop()
        }
        stopping.whenSet { node.stop() }
        await node.wait()
        if let failure = node.failure {
            throw CLIError.temporary("authority: deposed in term \(epoch): \(failure)")
        }
        if let loss = term.loss {
            throw CLIError.temporary("authority: deposed in term \(epoch) (\(loss)); start it on an empty --data directory to rejoin as a standby")
        }
        do {
            try await blocking { try term.resign(timeout: .seconds(2)) }
            logger.info("resigned term \(epoch): a standby takes over at once")
        } catch {
            logger.warning("could not resign term \(epoch) (\(error)): a standby takes over when the lease ends")
        }
        return 0
    }

    // MARK: Standby

    /// Follows `leader` until promoted, until another primary is elected, or until stopped.
    private func standby(of leader: Leader) async throws -> StandbyOutcome {
        guard let replication = leader.info.endpoints["replication"] else {
            throw CLIError.configuration("authority: the leader \(leader.info.name) publishes no replication endpoint; start every candidate with --replication")
        }
        var following = configuration
        following.replication?.standbyOf = replication
        let leadership = Leadership()
        following.leadership = leadership
        let node = try makeNode(following)
        Output.endpoints(try await start(node), metrics: metrics)
        stopping.whenSet { node.stop() }
        logger.info("standby of \(leader.info.name) (term \(leader.epoch)) at \(replication)")
        let registrar = StandbyRegistrar(client: client, key: standbyKey, ttl: ttl, logger: logger)
        defer { registrar.withdraw() }
        var leaderless = false
        while true {
            if stopping.isSet || node.failure != nil {
                node.stop()
                await node.wait()
                if let failure = node.failure, !stopping.isSet { throw CLIError("authority: the standby stopped", failure) }
                return .stopped
            }
            let metrics = node.metrics
            let progress = StandbyRegistration(version: metrics.version, lsn: metrics.journalLSN, endpoints: candidate.endpoints)
            await registrar.update(progress)
            let current: Leader?
            do {
                current = try await blocking { try election.currentLeader(timeout: .milliseconds(500)) }
            } catch {
                // etcd unreachable: keep following; the primary's own lease decides.
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            if let now = current, now.epoch == leader.epoch {
                leaderless = false
            } else if let now = current {
                logger.info("a new primary, \(now.info.name) (term \(now.epoch)): following it")
                node.stop()
                await node.wait()
                return .leaderChanged
            } else {
                leaderless = true
                // Only once the others can read how far it got (one that went by an older
                // registration could campaign too and win with a shorter journal), and only
                // while no live registration reaches further: a standby that died before it
                // could campaign is passed over once its lease ends.
                if registrar.published == progress, try await isMostUpToDate(progress),
                   let outcome = try await takeOver(node: node, leadership: leadership) {
                    return outcome
                }
            }
            // Without a leader every millisecond counts (the best standby's campaign, the others'
            // move to the winner, which sync acks wait for): look again soon.
            try? await Task.sleep(for: leaderless ? .milliseconds(20) : .milliseconds(100))
        }
    }

    /// Campaigns once; promotes `node` and serves as primary when it wins.
    private func takeOver(node: AuthorityNode<R>, leadership: Leadership) async throws -> StandbyOutcome? {
        let won: (term: LeaderTerm, watch: LossWatch)?
        do {
            won = try await campaign(for: ttl)
        } catch CoordinationError.cancelled {
            // A stop asked for while campaigning (SIGTERM to every node at once: the primary
            // resigned, so this standby campaigned) is a graceful stop, as anywhere else.
            node.stop()
            await node.wait()
            return .stopped
        }
        // nil: another standby won, and the next look finds it.
        guard let (term, watch) = won else { return nil }
        let epoch = UInt64(term.epoch)
        leadership.grant(term: epoch) { term.isLeader }
        let started = ContinuousClock.now
        let endpoints = try await node.promote()
        logger.notice("won term \(epoch): promoted in \(Int((ContinuousClock.now - started) / .milliseconds(1))) ms")
        Output.endpoints(endpoints, metrics: metrics)
        _ = try await primary(term: term, watch: watch, node: node)
        return .promoted
    }

    /// Campaigns for up to `duration`: the term won, with where its loss will be reported, or
    /// `nil` when another candidate holds the key until then.
    private func campaign(for duration: Duration) async throws -> (term: LeaderTerm, watch: LossWatch)? {
        let watch = LossWatch()
        do {
            let term = try await blocking { [candidate, stopping] in
                try election.campaign(as: candidate, deadline: .now + duration, cancellation: stopping.cancellation) { loss in watch.lost(loss) }
            }
            return (term, watch)
        } catch CoordinationError.campaignTimedOut {
            return nil
        }
    }

    /// Whether no other standby registered a journal that reaches further than `progress`
    /// (ties go to the smaller name; ``StandbyRegistration/precedes(_:name:other:)``).
    private func isMostUpToDate(_ progress: StandbyRegistration) async throws -> Bool {
        let app = configuration.appName
        guard let standbys = try? await blocking({ try StandbyRegistration.all(app: app, in: client, timeout: .milliseconds(500)) }) else { return false }
        let me = candidate.name
        return !standbys.contains { $0.name != me && $0.registration.precedes(progress, name: $0.name, other: me) }
    }

    // MARK: Terms on disk

    /// Notes in the data directory that it was primary in `term`.
    private func recordTerm(_ term: UInt64) throws {
        guard let termFile else { return }
        do {
            try "\(term)\n".write(toFile: termFile, atomically: true, encoding: .utf8)
        } catch {
            throw CLIError.cannotWrite("authority: cannot note the term in \(termFile): \(error)")
        }
    }

    /// Refuses to follow `leader` with a data directory that was primary in an older term.
    private func refuseIfDeposed(by leader: Leader) throws {
        guard let termFile, let text = try? String(contentsOfFile: termFile, encoding: .utf8),
              let own = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)), own < UInt64(leader.epoch) else { return }
        throw CLIError.configuration(
            "authority: this data directory was primary in term \(own) and \(leader.info.name) leads term \(leader.epoch) now: "
                + "its last records may never have reached the new primary. Move it aside and start on an empty --data directory "
                + "to rejoin as a standby (it copies the primary's state)")
    }

    // MARK: Nodes

    private func makeNode(_ configuration: AuthorityConfiguration) throws -> AuthorityNode<R> {
        let node = try AuthorityNode(reactor: reactor, configuration: configuration, logger: logger, context: ZMQContext())
        nodes.set(node)
        return node
    }

    private func start(_ node: AuthorityNode<R>) async throws -> AuthorityNode<R>.Endpoints {
        do {
            return try await node.start()
        } catch let error as ZMQError {
            throw CLIError("authority: cannot bind", error)
        } catch {
            throw CLIError("authority: cannot start", error)
        }
    }
}

/// Runs a blocking call (etcd over HTTP) on a thread of its own, off the tasks' shared threads.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result(catching: body)) }
    }
}

/// Where a term's loss goes: the lease keeper calls ``lost(_:)``, possibly before the node that
/// must stop is known; ``onLoss(_:)`` runs the reaction at once if the loss came first.
final class LossWatch: Sendable {
    private let state = Mutex<(loss: LeadershipLoss?, reaction: (@Sendable (LeadershipLoss) -> Void)?)>((nil, nil))

    func lost(_ loss: LeadershipLoss) {
        let reaction = state.withLock { state -> (@Sendable (LeadershipLoss) -> Void)? in
            state.loss = loss
            return state.reaction
        }
        reaction?(loss)
    }

    func onLoss(_ reaction: @escaping @Sendable (LeadershipLoss) -> Void) {
        let loss = state.withLock { state -> LeadershipLoss? in
            state.reaction = reaction
            return state.loss
        }
        if let loss { reaction(loss) }
    }
}
