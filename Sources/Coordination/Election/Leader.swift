/// The leader of one term, as anyone reads it from etcd.
public struct Leader: Sendable, Equatable {
    /// What the leader published.
    public var info: LeaderInfo
    /// The term's epoch: the leader key's create revision, larger for every later term.
    public var epoch: Int64
    /// The lease that holds the key: when it ends, the term ends.
    public var lease: Int64

    public init(info: LeaderInfo, epoch: Int64, lease: Int64) {
        self.info = info
        self.epoch = epoch
        self.lease = lease
    }
}
