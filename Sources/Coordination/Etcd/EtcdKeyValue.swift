import Foundation

/// One key as etcd stores it, with the revisions that order its history.
public struct EtcdKeyValue: Sendable, Equatable {
    /// The key, as text.
    public var key: String
    /// The value's bytes.
    public var value: Data
    /// The revision that created the key (its current incarnation): grows with every create.
    public var createRevision: Int64
    /// The revision of the last change to the key.
    public var modRevision: Int64
    /// How many times the key changed since it was created (1 after the create).
    public var version: Int64
    /// The lease the key is attached to; 0 for none.
    public var lease: Int64

    public init(key: String, value: Data, createRevision: Int64, modRevision: Int64, version: Int64, lease: Int64) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.version = version
        self.lease = lease
    }
}
