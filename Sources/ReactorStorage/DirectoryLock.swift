import Glibc
import SystemCalls

/// An exclusive `flock(2)` on `DIR/LOCK`, so two authorities never write one data directory.
///
/// `flock` locks belong to the open file description, so a second lock attempt fails even from
/// the same process, and the kernel drops the lock when the holder dies (no stale lock files).
/// The holder's pid is written into the file so the error can name it. Not thread-safe: owned by
/// the ``Journal`` that took it, or by the authority for a snapshot directory of its own.
package final class DirectoryLock {
    let path: String
    private var fd: Int32

    /// Takes the lock without waiting.
    ///
    /// - Throws: ``PersistenceError/locked(directory:pid:)`` if someone else holds it;
    ///   ``PersistenceError/io(operation:path:errno:)`` if the file cannot be opened.
    init(directory: String) throws {
        path = directory + "/LOCK"
        fd = try PosixFile.open(path, flags: O_RDWR | O_CREAT)
        if case .failure(let error) = retryingInterrupts("flock", { flock(fd, LOCK_EX | LOCK_NB) }) {
            let holder = Self.readPID(fd, path: path)
            // Closed here, and marked so: the deinit, which runs when an initializer throws once
            // every property is set, would close the number again, maybe another thread's file.
            PosixFile.close(fd)
            fd = -1
            if error.code == EWOULDBLOCK {
                throw PersistenceError.locked(directory: directory, pid: holder)
            }
            throw PersistenceError.io(operation: "flock", path: path, errno: error.code)
        }
        let pid = Array("\(getpid())\n".utf8)
        do {
            try PosixFile.truncate(fd, to: 0, path: path)
            try pid.withUnsafeBytes { try PosixFile.write(fd, $0, at: 0, path: path) }
        } catch {
            PosixFile.close(fd)
            fd = -1
            throw error
        }
    }

    /// Creates `directory` if needed and takes its lock without waiting; see ``init(directory:)``.
    package static func lock(creating directory: String) throws -> DirectoryLock {
        let directory = PosixFile.normalize(directory)
        try PosixFile.makeDirectories(directory)
        return try DirectoryLock(directory: directory)
    }

    /// Drops the lock. Safe to call twice.
    package func release() {
        guard fd >= 0 else { return }
        _ = flock(fd, LOCK_UN)
        PosixFile.close(fd)
        fd = -1
    }

    deinit { release() }

    private static func readPID(_ fd: Int32, path: String) -> Int32? {
        guard let bytes = try? PosixFile.read(fd, count: 32, at: 0, path: path) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).filter { $0.isNumber }
        return Int32(text)
    }
}
