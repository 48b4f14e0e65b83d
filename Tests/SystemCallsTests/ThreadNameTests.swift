import Foundation
import SystemCalls
import Testing

/// Threads name themselves in the kernel, whichever thread created them.
@Suite struct ThreadNameTests {
    /// What a new thread saw of its own name: whether the kernel took it, and the name read back
    /// through the thread library and through `/proc/thread-self/comm`.
    struct Seen: Sendable {
        var took: Bool
        var name: String?
        var comm: String?
    }

    /// Starts a thread that names itself `name` first thing, and returns what it then saw.
    func nameInNewThread(_ name: String) async -> Seen {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                let took = ThreadName.setCurrent(name)
                let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
                continuation.resume(returning: Seen(took: took, name: ThreadName.current(), comm: comm?.trimmingCharacters(in: .newlines)))
            }
            thread.start()
        }
    }

    /// Created from tasks on the shared pool, as a node's loop is: Foundation's `Thread.name`,
    /// set the same way, left some of these with the pool thread's name.
    @Test func threadsStartedFromThePoolCarryTheNamesTheyGaveThemselves() async {
        let seen = await withTaskGroup(of: (String, Seen).self) { group in
            for index in 0 ..< 40 {
                group.addTask {
                    let name = "probe-\(index)"
                    return (name, await nameInNewThread(name))
                }
            }
            var all: [String: Seen] = [:]
            for await (name, outcome) in group { all[name] = outcome }
            return all
        }
        #expect(seen.count == 40)
        for (name, outcome) in seen {
            #expect(outcome.took && outcome.name == name && outcome.comm == name, "\(name): \(outcome)")
        }
    }

    @Test func aLongNameIsCutToFifteenBytesAtTheEndOfACharacter() async {
        let ascii = await nameInNewThread("snapshot-replica-thread")
        #expect(ascii.took && ascii.name == "snapshot-replic" && ascii.comm == "snapshot-replic")
        // Nine two-byte characters: seven fit.
        let accented = await nameInNewThread(String(repeating: "é", count: 9))
        #expect(accented.took && accented.name == String(repeating: "é", count: 7))
    }
}
