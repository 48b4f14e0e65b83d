import Glibc

/// Durable snapshots of the authority's state (opaque payloads, the encoded sequencer
/// checkpoint), each covering the journal through some LSN.
///
/// Layout: `DIR/snapshots/snapshot-<LSN, 20 digits>.snap` (or a snapshot directory of its own,
/// see ``init(directory:app:snapshotDirectory:)``), framed as described by the header
/// table in `SnapshotHeader.swift` (magic `RBUSSNAP`, version 1, app name, LSN, payload length,
/// CRC32C, payload). Writes are atomic: a temporary file is written and synced, renamed into
/// place, and the directory synced, so a crash leaves either the old set or the new one. Snapshot
/// writes always sync, whatever the journal's ``FsyncPolicy``: they are rare, and compaction relies
/// on them. The newest ``retainedCount`` snapshots are kept.
///
/// Threads: not `Sendable`; one thread owns a store. The authority recovers with one on its loop
/// thread, then writes with another that its ``SnapshotWriter`` creates and uses on the writer
/// thread only (or its snapshot replica on its own thread: one of them writes at a time), never
/// while recovery runs. It takes no lock of its own: use it only while the
/// ``Journal`` on the same directory is open, whose lock covers both (the authority stops its
/// writer before closing the journal).
/// Errors: every throwing method throws ``PersistenceError``.
package final class SnapshotStore {
    /// Snapshots kept after a write: the newest, and one fallback in case it turns out corrupt.
    package static let retainedCount = 2

    /// `DIR/snapshots`, or the snapshot directory given.
    package let directory: String
    /// The app name written in and required from every snapshot.
    package let app: String

    private static let prefix = "snapshot-"
    private static let suffix = ".snap"
    private static let temporarySuffix = ".tmp"

    /// Opens (creating if needed) `dataDirectory/snapshots`, or `snapshotDirectory` when given,
    /// and deletes temporary files left by a write that crashed before its rename.
    ///
    /// A snapshot directory of its own, on another filesystem than the journal, keeps a snapshot's
    /// writes and syncs from holding up the journal's `fdatasync` (on ext4 one journal commit
    /// waits for every file's data); its owner locks it (``DirectoryLock``), since the data
    /// directory's lock does not cover it.
    ///
    /// - Throws: ``PersistenceError/invalidConfiguration(_:)`` for an app name outside 1...255
    ///   UTF-8 bytes, ``PersistenceError/io(operation:path:errno:)``.
    package init(directory dataDirectory: String, app: String, snapshotDirectory: String? = nil) throws {
        guard (1...SegmentHeader.maxAppBytes).contains(app.utf8.count) else {
            throw PersistenceError.invalidConfiguration("app name must be 1 to 255 UTF-8 bytes, got \(app.utf8.count)")
        }
        directory = snapshotDirectory.map(PosixFile.normalize) ?? PosixFile.normalize(dataDirectory) + "/snapshots"
        self.app = app
        try PosixFile.makeDirectories(directory)
        for name in try PosixFile.list(directory) where name.hasPrefix(Self.prefix) && name.hasSuffix(Self.temporarySuffix) {
            try PosixFile.remove(directory + "/" + name)
        }
    }

    /// LSNs of the snapshot files present, oldest first (files moved aside are not listed).
    package func snapshotLSNs() throws -> [UInt64] {
        try Self.lsns(in: directory)
    }

    /// LSNs of the snapshot files in `directory`, oldest first.
    static func lsns(in directory: String) throws -> [UInt64] {
        try PosixFile.list(directory).compactMap(lsn(fromFileName:)).sorted()
    }

    /// `snapshot-<LSN, 20 digits>.snap`.
    static func fileName(for lsn: UInt64) -> String {
        prefix + JournalSegment.padded(lsn) + suffix
    }

    /// Path of the snapshot covering through `lsn`.
    package func path(for lsn: UInt64) -> String {
        directory + "/" + Self.fileName(for: lsn)
    }

    /// Durably writes a snapshot covering journal records through `lsn`, then deletes all but
    /// the newest ``retainedCount`` snapshots. A snapshot with the same LSN is replaced.
    ///
    /// - Returns: what was written and deleted, and how far the journal may now be compacted.
    /// - Throws: ``PersistenceError/staleSnapshot(lsn:newest:)`` if a newer snapshot exists;
    ///   ``PersistenceError/io(operation:path:errno:)``.
    @discardableResult
    package func write(_ payload: [UInt8], coveringThrough lsn: UInt64) throws -> SnapshotWriteResult {
        try payload.withUnsafeBytes { try write($0, coveringThrough: lsn) }
    }

    /// ``write(_:coveringThrough:)-([UInt8],_)`` from bytes lent by their owner (the snapshot
    /// writer's encoder buffer), which are written to the file as they are, behind their header.
    @discardableResult
    package func write(_ payload: UnsafeRawBufferPointer, coveringThrough lsn: UInt64) throws -> SnapshotWriteResult {
        let existing = try snapshotLSNs()
        if let newest = existing.last, newest > lsn {
            throw PersistenceError.staleSnapshot(lsn: lsn, newest: newest)
        }
        let target = path(for: lsn)
        let temporary = target + Self.temporarySuffix
        let header = SnapshotHeader.header(app: app, lsn: lsn, payload: payload)
        let fd = try PosixFile.open(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC)
        do {
            try header.withUnsafeBytes { try PosixFile.write(fd, $0, at: 0, path: temporary) }
            try PosixFile.write(fd, payload, at: header.count, path: temporary)
            try PosixFile.sync(fd, path: temporary)
        } catch {
            PosixFile.close(fd)
            try? PosixFile.remove(temporary)
            throw error
        }
        PosixFile.close(fd)
        try PosixFile.rename(temporary, to: target)
        try PosixFile.syncDirectory(directory)

        let all = Array(Set(existing + [lsn])).sorted()
        let retained = Array(all.suffix(Self.retainedCount))
        var deleted: [String] = []
        for old in all.dropLast(Self.retainedCount) {
            try PosixFile.remove(path(for: old))
            deleted.append(path(for: old))
        }
        if !deleted.isEmpty { try PosixFile.syncDirectory(directory) }
        return SnapshotWriteResult(
            file: target, retained: retained, deleted: deleted,
            compactableThrough: retained.count >= Self.retainedCount ? retained[0] : 0)
    }

    /// The newest snapshot that passes its checks, or `nil` if there is no snapshot at all.
    ///
    /// Newer snapshots that fail (truncated, bad magic, checksum, LSN or length mismatch) are
    /// renamed `<file>.corrupt` and listed in ``LoadedSnapshot/rejected``.
    ///
    /// - Throws: ``PersistenceError/unsupportedFormat(version:file:)`` or
    ///   ``PersistenceError/appMismatch(expected:found:file:)`` (files left untouched);
    ///   ``PersistenceError/noValidSnapshot(directory:rejected:)`` if snapshots exist but all
    ///   fail; ``PersistenceError/io(operation:path:errno:)``.
    package func loadNewest() throws -> LoadedSnapshot? {
        let lsns = try snapshotLSNs()
        var rejected: [SnapshotRejection] = []
        for lsn in lsns.reversed() {
            let file = path(for: lsn)
            let bytes = try PosixFile.readFile(file)
            switch try SnapshotHeader.decode(bytes, app: app, expectedLSN: lsn, file: file) {
            case .payload(let payload):
                return LoadedSnapshot(lsn: lsn, payload: payload, file: file, rejected: rejected)
            case .defect(let defect):
                let target = PosixFile.freshPath(file + ".corrupt")
                let moved: String? = (try? PosixFile.rename(file, to: target)) != nil ? target : nil
                rejected.append(SnapshotRejection(file: file, lsn: lsn, defect: defect, movedTo: moved))
            }
        }
        if !rejected.isEmpty {
            try? PosixFile.syncDirectory(directory)
            throw PersistenceError.noValidSnapshot(directory: directory, rejected: rejected)
        }
        return nil
    }

    static func lsn(fromFileName name: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.count == 20, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt64(digits)
    }
}

/// One thread owns a snapshot store.
@available(*, unavailable)
extension SnapshotStore: Sendable {}
