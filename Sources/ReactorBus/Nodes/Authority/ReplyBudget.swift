import Synchronization

/// The bytes of replies the authority has queued for each client and libzmq still holds, against
/// a per-client budget (`--client-queue-bytes`).
///
/// libzmq bounds a peer's queue in messages only, and a `snapshot` reply carries the whole state,
/// so a client that keeps asking and never reads could make the authority hold thousands of
/// copies of it. The loop charges a reply here before sending it and sends it with
/// ``ZMQSocket/trySend(_:onRelease:)``, whose release gives the bytes back when libzmq lets go of
/// the message (written to the kernel, or dropped). A reply that would take its client over the
/// budget is refused, unless nothing is queued for that client: a client that reads can always
/// get one reply, even one larger than the budget. So one client costs at most the budget plus
/// one reply.
///
/// Owned by the loop thread; only ``Account/release(_:)`` is called from other threads.
final class ReplyBudget {
    /// One client's queued bytes. Charged on the loop thread, released from any thread.
    final class Account: Sendable {
        private let queued = Atomic<Int>(0)

        /// Bytes charged and not yet released.
        var bytes: Int { queued.load(ordering: .acquiring) }

        /// Gives back what one reply was charged, once libzmq has let go of it.
        func release(_ bytes: Int) { queued.subtract(bytes, ordering: .releasing) }

        fileprivate func charge(_ bytes: Int) { queued.add(bytes, ordering: .relaxed) }
    }

    /// What libzmq holds per queued message besides its bytes (as the feed counts it:
    /// ``FeedPublisher/messageOverhead``).
    static let messageOverhead = FeedPublisher.messageOverhead

    /// Bytes one client may have queued.
    let limit: Int
    private var accounts: [[UInt8]: Account] = [:]

    /// A budget of `limit` bytes per client (at least 1).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// What a message costs: its frames' bytes plus ``messageOverhead``.
    static func cost(of frames: [[UInt8]]) -> Int {
        frames.reduce(messageOverhead) { $0 + $1.count }
    }

    /// Charges `bytes` to `client` (its routing id) and returns the account to release them to,
    /// or `nil` when they would take it over ``limit`` while something is already queued.
    func charge(client: [UInt8], bytes: Int) -> Account? {
        let account: Account
        if let known = accounts[client] {
            account = known
        } else {
            account = Account()
            accounts[client] = account
        }
        let queued = account.bytes
        if queued > 0, queued + bytes > limit { return nil }
        account.charge(bytes)
        return account
    }

    /// Bytes queued for `client` now.
    func queuedBytes(client: [UInt8]) -> Int {
        accounts[client]?.bytes ?? 0
    }

    /// Clients with an account.
    var clientCount: Int { accounts.count }

    /// Forgets the accounts of clients with nothing queued, so departed clients cost nothing.
    /// Only this thread charges, so an account at zero stays at zero until the next charge.
    func prune() {
        accounts = accounts.filter { $0.value.bytes > 0 }
    }
}
