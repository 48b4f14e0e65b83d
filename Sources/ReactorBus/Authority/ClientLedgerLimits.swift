/// How much the authority's ``ClientLedger`` remembers. Set from the authority's configuration
/// at start, not stored in snapshots, so an operator can change them between runs.
public struct ClientLedgerLimits: Sendable, Equatable {
    /// Acks kept per client (`--remembered-acks`): a resend of one of a client's last
    /// `rememberedAcks` accepted actions is answered with its original `action_seq` and `version`
    /// and checked against its original payload. Older resends are still never applied again.
    public var rememberedAcks: Int
    /// Clients remembered (`--max-clients`). Past it the least recently seen are forgotten, in
    /// bulk (1% at a time), and leave a tombstone.
    public var maxClients: Int
    /// Tombstones of forgotten clients kept (8 bytes each for the id's fingerprint plus its
    /// highest sequence number), oldest dropped first.
    public var maxForgottenClients: Int
    /// Gaps (refused or never-sent sequence numbers below a later accepted one) kept per client;
    /// past it the oldest accepted range is forgotten and resends into it are answered `stale`.
    public var maxGapsPerClient: Int

    /// Tombstones kept for a bound on clients: four times as many, so a forgotten client stays
    /// recognised until four times `maxClients` other clients have come and gone after it.
    package static func forgottenClients(forMaxClients maxClients: Int) -> Int {
        maxClients.multipliedReportingOverflow(by: 4).overflow ? Int.max : maxClients * 4
    }

    /// The defaults: 8 acks per client, a million clients, four million tombstones, 64 gaps.
    public init(rememberedAcks: Int = 8, maxClients: Int = 1_000_000, maxForgottenClients: Int = 4_000_000, maxGapsPerClient: Int = 64) {
        self.rememberedAcks = max(1, rememberedAcks)
        self.maxClients = max(1, maxClients)
        self.maxForgottenClients = max(0, maxForgottenClients)
        self.maxGapsPerClient = max(0, maxGapsPerClient)
    }
}
