/// A shell loop that counts to 100,000 and ends: about 0.2 s of CPU. The process tests run it and
/// wait for a line printed after it, rather than poll a spinning process's CPU with sleeps.
enum CountingLoop {
    static let script = "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"
}
