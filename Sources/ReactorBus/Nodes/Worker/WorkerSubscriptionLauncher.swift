import MessagePack
import ReactorCore
import ReactorLog
import ZeroMQ

/// Starts subscription runs as Swift tasks: decodes the subscription, runs its handler (again
/// after a backoff whenever it ends, see ``SubscriptionRunner``), encodes each event's action
/// and posts it to the loop thread's mailbox, in order.
struct WorkerSubscriptionLauncher<R: Reactor>: Sendable {
    let reactor: R
    let runner: SubscriptionRunner<R.Subscription, R.Action>
    let events: Mailbox<WorkerJobEvent>
    /// An encoded action larger than this could never reach the authority.
    let maxPayloadBytes: Int
    let logger: Logger

    /// Starts one run; cancelling the returned task cancels the handler.
    func launch(token: UInt64, run: UInt64, id: String, kind: String, after: UInt64?, payload: [UInt8]) -> Task<Void, Never> {
        let (runner, events, logger, limit) = (self.runner, self.events, self.logger, maxPayloadBytes)
        let subscription: R.Subscription
        do {
            subscription = try MessagePackDecoder().decode(R.Subscription.self, from: payload)
        } catch {
            logger.error("subscription \(id) (run \(run)): the payload does not decode as \(R.Subscription.self): \(error); not started")
            return Task {}
        }
        return Task {
            await runner.run(subscription, resumingAfter: after, ended: { error in
                if let error {
                    logger.warning("subscription \(id) (run \(run)) failed: \(error); running it again")
                } else {
                    logger.info("subscription \(id) (run \(run)) ended; running it again")
                }
            }) { index, action in
                // An event that cannot be sent leaves a gap that holds the run's later events
                // back for good: said loudly, once per event.
                let bytes: [UInt8]
                do {
                    bytes = try MessagePackEncoder().encode(action)
                } catch {
                    logger.error("subscription \(id) (run \(run)): event \(index) does not encode: \(error)")
                    return
                }
                guard bytes.count <= limit else {
                    logger.error("subscription \(id) (run \(run)): event \(index) is \(bytes.count) bytes, more than the \(limit) a message may carry")
                    return
                }
                events.post(.subscriptionEvent(token: token, run: run, index: index, payload: bytes))
            }
        }
    }
}
