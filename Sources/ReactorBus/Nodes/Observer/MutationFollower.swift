import MessagePack
import ReactorCore

/// How an ``Observer`` that has the reactor keeps the state itself: it decodes each feed
/// mutation and applies it with the reactor's own `reduce` on top of its last snapshot, so it
/// holds the exact state at every version without fetching or decoding whole snapshots.
///
/// Used only on the observer's loop thread.
struct MutationFollower<State: Sendable>: Sendable {
    /// Decodes a mutation payload and applies it to the state.
    let apply: @Sendable (inout State, [UInt8]) throws -> Void

    /// A follower that applies `R`'s mutations with `reactor`'s `reduce`.
    static func reducing<R: Reactor>(with reactor: R) -> MutationFollower<R.State> {
        MutationFollower<R.State> { state, payload in
            let mutation = try MessagePackDecoder().decode(R.Mutation.self, from: payload)
            reactor.reduce(state: &state, mutation: mutation)
        }
    }
}
