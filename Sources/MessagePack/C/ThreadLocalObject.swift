#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One object per thread, under a pthread key: made on the thread's first use, released when the
/// thread exits. The per-thread state the coders reuse (``ThreadZone``, ``ThreadWriterPool``)
/// lives in one of these.
struct ThreadLocalObject<Object: AnyObject> {
    /// `nil` when the process has no pthread key left; then there is no per-thread object.
    private let key: pthread_key_t?

    init() {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
        self.key = created == 0 ? key : nil
    }

    /// The calling thread's object, made with `make` on first use; `nil` when there is no key,
    /// `make` gives none, or the thread cannot keep it.
    func current(_ make: () -> Object?) -> Object? {
        guard let key else { return nil }
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Object>.fromOpaque(pointer).takeUnretainedValue()
        }
        guard let object = make() else { return nil }
        guard pthread_setspecific(key, Unmanaged.passRetained(object).toOpaque()) == 0 else {
            Unmanaged.passUnretained(object).release()
            return nil
        }
        return object
    }
}
