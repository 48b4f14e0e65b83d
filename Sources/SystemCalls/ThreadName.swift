import Glibc

/// The kernel's name for the calling thread (its `comm`: what `top -H`, `ps -L`, `perf`,
/// debuggers and core dumps show), at most 15 bytes.
///
/// Why not Foundation's `Thread.name`: on Linux, a `Thread` that names itself as its body starts
/// may find `Thread.current` is not yet itself, and the kernel's name then stays the one it
/// inherited from the thread that created it. A node's loop started from a task was named after
/// the shared pool's thread ("oot.default-qos", the tail of "com.apple.root.default-qos") in
/// about one start in four on a busy machine.
///
/// `pthread_setname_np` and `pthread_getname_np` are GNU extensions the Glibc module does not
/// import: they are looked up by name, once.
package enum ThreadName {
    /// The most bytes the kernel keeps of a thread's name.
    package static var maxBytes: Int { 15 }

    private typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    private typealias GetName = @convention(c) (pthread_t, UnsafeMutablePointer<CChar>, Int) -> Int32

    private static let setName: SetName? = dlsym(nil, "pthread_setname_np").map { unsafeBitCast($0, to: SetName.self) }
    private static let getName: GetName? = dlsym(nil, "pthread_getname_np").map { unsafeBitCast($0, to: GetName.self) }

    /// Names the calling thread `name`, cut to its first ``maxBytes`` bytes (at a character's
    /// end). Returns whether the kernel took it.
    @discardableResult
    package static func setCurrent(_ name: String) -> Bool {
        guard let setName else { return false }
        var cut = Substring(name)
        while cut.utf8.count > maxBytes { cut.removeLast() }
        return String(cut).withCString { setName(pthread_self(), $0) == 0 }
    }

    /// The calling thread's name, or `nil` when it cannot be read.
    package static func current() -> String? {
        guard let getName else { return nil }
        var buffer = [CChar](repeating: 0, count: maxBytes + 1)
        guard getName(pthread_self(), &buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
