import Glibc
import SystemCalls

/// Thin wrappers over the POSIX calls the journal and snapshot store need, turning failures into
/// ``PersistenceError/io(operation:path:errno:)`` and retrying `EINTR` (through `retryingInterrupts`).
///
/// Plain functions on file descriptors; callers own the descriptors they open.
enum PosixFile {
    /// Opens `path` with `flags` (plus `O_CLOEXEC`).
    static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        try call("open", path: path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Writes all of `bytes` at `offset`, looping over short writes.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var done = 0
        while done < bytes.count {
            done += try call("write", path: path) { Glibc.pwrite(fd, base + done, bytes.count - done, off_t(offset + done)) }
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer only if the file ends first.
    static func read(_ fd: Int32, count: Int, at offset: Int, path: String) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n: Int
                do {
                    n = try call("read", path: path) { Glibc.pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done)) }
                } catch {
                    initialized = done
                    throw error
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
    }

    /// The whole content of the file at `path`.
    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = try open(path, flags: O_RDONLY)
        defer { close(fd) }
        return try read(fd, count: try size(fd, path: path), at: 0, path: path)
    }

    static func size(_ fd: Int32, path: String) throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw PersistenceError.io(operation: "fstat", path: path, errno: errno)
        }
        return Int(info.st_size)
    }

    /// `fdatasync` (enough for appended data: it also flushes the new file size).
    static func sync(_ fd: Int32, path: String) throws {
        try call("fdatasync", path: path) { fdatasync(fd) }
    }

    /// A second descriptor for the open file `fd` (close-on-exec), which stays valid when `fd`
    /// is closed: a sync on another thread must never meet a closed or reused descriptor.
    static func duplicate(_ fd: Int32, path: String) throws -> Int32 {
        try call("fcntl(F_DUPFD_CLOEXEC)", path: path) { fcntl(fd, F_DUPFD_CLOEXEC, 0) }
    }

    /// Makes creations, renames and deletions inside `directory` durable.
    static func syncDirectory(_ directory: String) throws {
        let fd = try open(directory, flags: O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try call("fsync", path: directory) { fsync(fd) }
    }

    static func truncate(_ fd: Int32, to length: Int, path: String) throws {
        try call("ftruncate", path: path) { ftruncate(fd, off_t(length)) }
    }

    static func rename(_ from: String, to: String) throws {
        guard Glibc.rename(from, to) == 0 else {
            throw PersistenceError.io(operation: "rename to \(to)", path: from, errno: errno)
        }
    }

    static func remove(_ path: String) throws {
        guard unlink(path) == 0 else {
            throw PersistenceError.io(operation: "unlink", path: path, errno: errno)
        }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// `mkdir -p`.
    static func makeDirectories(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw PersistenceError.io(operation: "mkdir", path: path, errno: ENOTDIR)
            }
            return
        }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try makeDirectories(String(path[..<slash]))
        }
        if mkdir(path, 0o755) != 0 {
            let code = errno
            if code != EEXIST { throw PersistenceError.io(operation: "mkdir", path: path, errno: code) }
        }
    }

    /// Names in `directory` (without `.` and `..`), unsorted.
    static func list(_ directory: String) throws -> [String] {
        guard let dir = opendir(directory) else {
            throw PersistenceError.io(operation: "opendir", path: directory, errno: errno)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A path that does not exist yet: `base`, else `base.1`, `base.2`, ...
    static func freshPath(_ base: String) -> String {
        var candidate = base
        var n = 0
        while exists(candidate) {
            n += 1
            candidate = "\(base).\(n)"
        }
        return candidate
    }

    /// Runs one system call through `retryingInterrupts`; a failure other than `EINTR` becomes
    /// ``PersistenceError/io(operation:path:errno:)`` naming the call and `path`.
    @discardableResult
    private static func call<Value: SignedInteger>(_ operation: StaticString, path: String, _ body: () -> Value) throws(PersistenceError) -> Value {
        switch retryingInterrupts(operation, body) {
        case .success(let value): return value
        case .failure(let error): throw .io(operation: error.function, path: path, errno: error.code)
        }
    }

    /// Removes trailing slashes (keeping `/`).
    static func normalize(_ path: String) -> String {
        var result = path
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }
}
