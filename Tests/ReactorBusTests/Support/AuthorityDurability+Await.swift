import Foundation
import Testing
@testable import ReactorBus
import ZeroMQ

extension AuthorityDurability {
    /// Takes the syncer's outcomes, as the loop does when its poller wakes, until `lsn` is
    /// durable (at most 10 s).
    func awaitDurable(through lsn: UInt64) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while durableLSN < lsn {
            var item = pollfd(fd: syncOutcomes.fileDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&item, 1, 100)
            try collectSyncs(now: MonotonicClock.milliseconds())
            try #require(ContinuousClock.now < deadline, "LSN \(lsn) not durable within 10 s (durable: \(durableLSN))")
        }
    }
}
