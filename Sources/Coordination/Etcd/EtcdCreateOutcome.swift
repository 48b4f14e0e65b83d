/// What a create-if-absent transaction did.
public enum EtcdCreateOutcome: Sendable, Equatable {
    /// The key did not exist and now holds the value; `revision` is its create revision.
    case created(revision: Int64)
    /// The key existed: it was left alone and is read back (in the same transaction).
    case taken(EtcdKeyValue)
}
