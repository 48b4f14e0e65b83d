/// What a client reads beyond the replies every release sends, named in its `features` request
/// on the actions socket (``ClientMessage/features(requestID:features:)``).
///
/// The authority uses a feature only for the connection (routing id) that named it, so a client
/// of an older release, which never sends `features`, only ever gets the replies it knows. An
/// older authority answers the request `unknown_kind`, and the client goes on without.
package enum ClientFeature {
    /// Several acks in one `acks` message (``AuthorityReply/acks(_:)``, ``AckBatch``).
    package static let acks = "acks"

    /// Everything this release's client reads.
    package static let all = [acks]
}
