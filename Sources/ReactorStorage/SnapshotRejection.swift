/// A snapshot file ``SnapshotStore/loadNewest()`` skipped because it failed its checks.
///
/// The file is renamed with a `.corrupt` suffix (kept for inspection, no longer counted among
/// the retained snapshots) and the next older snapshot is tried.
public struct SnapshotRejection: Hashable, Sendable, CustomStringConvertible {
    /// Why the file was rejected.
    public enum Defect: Hashable, Sendable, CustomStringConvertible {
        /// The file ends before its header does.
        case truncated(size: Int, needed: Int)
        /// The file does not start with `RBUSSNAP`.
        case badMagic
        /// The header's LSN disagrees with the file name.
        case lsnMismatch(fileName: UInt64, header: UInt64)
        /// The header's payload length disagrees with the file size.
        case lengthMismatch(declared: UInt64, actual: Int)
        /// The CRC32C over header and payload does not match.
        case checksumMismatch(stored: UInt32, computed: UInt32)

        public var description: String {
            switch self {
            case .truncated(let size, let needed): "truncated (\(size) bytes, header needs \(needed))"
            case .badMagic: "bad magic bytes"
            case .lsnMismatch(let name, let header): "header says LSN \(header), file name says \(name)"
            case .lengthMismatch(let declared, let actual): "payload is \(actual) bytes, header says \(declared)"
            case .checksumMismatch(let stored, let computed):
                "checksum mismatch (stored 0x\(String(stored, radix: 16)), computed 0x\(String(computed, radix: 16)))"
            }
        }
    }

    /// The snapshot's original path.
    public var file: String
    /// The LSN in its file name.
    public var lsn: UInt64
    /// What was wrong.
    public var defect: Defect
    /// Where it was moved (`<file>.corrupt`), or `nil` if the rename failed.
    public var movedTo: String?

    public var description: String {
        "\(file): \(defect)" + (movedTo.map { ", moved to \($0)" } ?? "")
    }
}
