import Glibc

/// Reads an authority's data directory without locking or changing anything: for the journal
/// tools (`journal dump`, `journal verify`, `replay`), which may run beside a live authority or
/// on a copy. What the authority writes meanwhile may or may not be seen; nothing it relies on
/// is touched (no lock taken, no torn tail cut, no damaged file renamed).
package struct DataDirectoryReader {
    /// One snapshot file, checked.
    package struct StoredSnapshot: Sendable {
        package var lsn: UInt64
        package var file: String
        /// The payload; `nil` when the file is unusable (see ``defect``).
        package var payload: [UInt8]?
        /// Why the file is unusable.
        package var defect: SnapshotRejection.Defect?
    }

    /// The journal as the authority would find it on opening: the intact segments (up to any
    /// damage) and the report, whose `damage` says what opening would cut or refuse.
    package struct JournalScan {
        package var report: JournalRecoveryReport
        let segments: [JournalSegment]

        /// The intact records with LSN `> lsn`, in order, checked again as read.
        package func records(after lsn: UInt64) -> JournalReader {
            JournalReader(segments: segments.filter { $0.recordCount > 0 && $0.lastLSN > lsn }, after: lsn)
        }
    }

    package let directory: String
    package let app: String
    package let snapshotDirectory: String

    /// A reader of `directory` (snapshots in `snapshotDirectory`, default `directory/snapshots`).
    package init(directory: String, app: String, snapshotDirectory: String? = nil) {
        self.directory = PosixFile.normalize(directory)
        self.app = app
        self.snapshotDirectory = PosixFile.normalize(snapshotDirectory ?? self.directory + "/snapshots")
    }

    /// Every snapshot file, oldest first, each checked (header, LSN, length, checksum).
    ///
    /// - Throws: ``PersistenceError/unsupportedFormat(version:file:)``,
    ///   ``PersistenceError/appMismatch(expected:found:file:)`` or an I/O error.
    package func snapshots() throws -> [StoredSnapshot] {
        guard PosixFile.exists(snapshotDirectory) else { return [] }
        return try SnapshotStore.lsns(in: snapshotDirectory).map { lsn in
            let file = snapshotDirectory + "/" + SnapshotStore.fileName(for: lsn)
            let bytes = try PosixFile.readFile(file)
            switch try SnapshotHeader.decode(bytes, app: app, expectedLSN: lsn, file: file) {
            case .payload(let payload): return StoredSnapshot(lsn: lsn, file: file, payload: payload, defect: nil)
            case .defect(let defect): return StoredSnapshot(lsn: lsn, file: file, payload: nil, defect: defect)
            }
        }
    }

    /// Scans the journal's segments and records (headers, checksums, LSN continuity) as opening
    /// it would, and reports any damage instead of cutting or refusing.
    ///
    /// - Throws: ``PersistenceError/unsupportedFormat(version:file:)``,
    ///   ``PersistenceError/appMismatch(expected:found:file:)``,
    ///   ``PersistenceError/notAJournalSegment(file:)`` or an I/O error.
    package func journal() throws -> JournalScan {
        let journalDirectory = directory + "/journal"
        guard PosixFile.exists(journalDirectory) else {
            throw PersistenceError.io(operation: "open", path: journalDirectory, errno: ENOENT)
        }
        let outcome = try JournalRecovery.run(directory: journalDirectory, app: app, repair: .refuse, readOnly: true)
        return JournalScan(report: outcome.report, segments: outcome.segments)
    }
}
