import CZMQ

/// The ZeroMQ socket pattern a ``ZMQSocket`` implements; raw values are libzmq's `ZMQ_*` constants.
package enum ZMQSocketType: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// Exclusive one-to-one pair (`ZMQ_PAIR`).
    case pair = 0
    /// Publisher: fans messages out to matching subscribers (`ZMQ_PUB`).
    case pub = 1
    /// Subscriber: receives messages whose first frame matches a subscription (`ZMQ_SUB`).
    case sub = 2
    /// Strict request side of request/reply (`ZMQ_REQ`).
    case req = 3
    /// Strict reply side of request/reply (`ZMQ_REP`).
    case rep = 4
    /// Asynchronous, load-balancing peer of a ROUTER (`ZMQ_DEALER`).
    case dealer = 5
    /// Addresses peers by routing id, given as the first frame (`ZMQ_ROUTER`).
    case router = 6
    /// Fair-queued pipeline sink (`ZMQ_PULL`).
    case pull = 7
    /// Load-balanced pipeline source (`ZMQ_PUSH`).
    case push = 8
    /// Publisher that also receives subscription messages (`ZMQ_XPUB`).
    case xpub = 9
    /// Subscriber that sends subscriptions as messages (`ZMQ_XSUB`).
    case xsub = 10
    /// Raw TCP peer, addressed by routing id frames (`ZMQ_STREAM`).
    case stream = 11

    /// The libzmq name of the type, e.g. `"DEALER"`.
    package var description: String {
        switch self {
        case .pair: "PAIR"
        case .pub: "PUB"
        case .sub: "SUB"
        case .req: "REQ"
        case .rep: "REP"
        case .dealer: "DEALER"
        case .router: "ROUTER"
        case .pull: "PULL"
        case .push: "PUSH"
        case .xpub: "XPUB"
        case .xsub: "XSUB"
        case .stream: "STREAM"
        }
    }
}
