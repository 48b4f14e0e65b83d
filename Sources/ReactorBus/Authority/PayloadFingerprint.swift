/// A 64-bit FNV-1a hash of bytes: stable across processes and restarts (unlike `Hasher`, which
/// is seeded per process), so it can be stored in snapshots.
///
/// The ledger uses it to tell a resend with the same payload from one with another payload, and
/// to remember forgotten client ids in 8 bytes each. Collisions only ever make the authority
/// refuse something (as a conflict, or as an unknown client); they never make it apply twice.
enum PayloadFingerprint {
    static func of<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        // 0 marks "unknown" in ``RecentAcks``.
        return hash == 0 ? 1 : hash
    }
}
