import Foundation
import Glibc
import ReactorCore
import Synchronization
import SystemCalls
import ZeroMQ

/// One clock for the timeouts of every attempt a worker runs: a hashed timer wheel on a thread
/// of its own, which cancels an attempt once its deadline has passed.
///
/// Why: with a task-group timeout every job cost a sleeping task and a Dispatch timer armed and
/// cancelled per attempt; a worker's profile was mostly those context switches and timers.
/// Here scheduling and cancelling a deadline are a dictionary insert and remove under a
/// `Mutex` (O(1)), and the thread wakes once per ``tick`` only while it holds deadlines; with
/// none it sleeps on a semaphore until the next ``schedule(after:_:)``.
///
/// Precision: an action never runs before its deadline, and runs within about one tick after
/// it (plus the scheduling delay of a loaded machine). Deadlines further away than one turn of
/// the wheel (``slotCount`` ticks) wait in their slot for the turn in which they are due.
///
/// Lifetime: the thread holds only the wheel's state, not the wheel; when the wheel is
/// dropped, the thread ends at its next tick (at once if it is idle), and deadlines still
/// pending never fire.
final class DeadlineWheel: EffectDeadlines {
    /// The wheel's resolution: how often the thread looks for due deadlines while it has any.
    let tick: Duration
    /// The number of slots; a deadline `slotCount` ticks away lands in the slot it started from.
    let slotCount: Int
    private let core: Core

    /// Creates a wheel and starts its thread (idle until the first deadline).
    ///
    /// - Parameters:
    ///   - tick: the resolution (at least 1 ms); 10 ms by default.
    ///   - slotCount: slots in one turn (at least 1); 1,024 ticks of 10 ms cover about 10 s.
    ///   - name: the thread's name (visible in debuggers and `top -H`).
    init(tick: Duration = .milliseconds(10), slotCount: Int = 1_024, name: String = "deadlines") {
        self.tick = max(tick, .milliseconds(1))
        self.slotCount = max(1, slotCount)
        let core = Core(tick: self.tick, slotCount: self.slotCount)
        self.core = core
        Thread.detachNewThread {
            ThreadName.setCurrent(name)
            core.run()
        }
    }

    deinit {
        core.close()
    }

    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> EffectDeadlineToken {
        // One reading of the clock for both the deadline and the cursor (one per job).
        core.schedule(after: delay, now: MonotonicClock.nanoseconds(), action)
    }

    /// Arranges for `action` to run once `deadline` has passed (at once, on the thread, if it has).
    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> EffectDeadlineToken {
        // The wheel counts on the monotonic clock, read after this one: never an earlier deadline.
        let remaining = deadline - .now
        return core.schedule(after: remaining, now: MonotonicClock.nanoseconds(), action)
    }

    @discardableResult
    func cancel(_ token: EffectDeadlineToken) -> Bool {
        core.cancel(token)
    }

    /// Deadlines scheduled and neither begun nor cancelled yet.
    var pendingCount: Int { core.pendingCount }
}

extension DeadlineWheel {
    /// The state the thread and the callers share: slots of entries under one lock, and the
    /// semaphore the idle thread waits on.
    private final class Core: Sendable {
        struct Entry {
            /// The token's id: scheduling order.
            let id: UInt64
            /// The tick (counted from ``start``) at or after which the entry is due.
            let dueTick: UInt64
            let action: @Sendable () -> Void
        }

        struct State {
            var slots: [[UInt64: Entry]]
            /// Entries taken out of their slot to fire, not begun yet: a cancel still stops them.
            var firing: Set<UInt64> = []
            /// Entries in the slots and in `firing`.
            var count = 0
            var nextID: UInt64 = 0
            /// The last tick whose slot was processed.
            var processedTick: UInt64 = 0
            /// The thread waits on ``wake`` (it had nothing to do); whoever clears this signals it.
            var idle = false
            var closed = false
            /// The last delay scheduled and its whole nanoseconds: a worker's jobs share one timeout.
            var lastDelay: (delay: Duration, nanoseconds: UInt64) = (.zero, 0)

            /// `delay` in whole nanoseconds (0 when negative), converted again only when it changed.
            mutating func nanoseconds(_ delay: Duration) -> UInt64 {
                if lastDelay.delay._low != delay._low || lastDelay.delay._high != delay._high {
                    lastDelay = (delay, delay.wholeNanoseconds)
                }
                return lastDelay.nanoseconds
            }
        }

        let tickNanoseconds: UInt64
        let slotCount: Int
        /// Where the ticks count from, in ``MonotonicClock`` nanoseconds: that clock rather than
        /// `ContinuousClock`, whose instants are a type of the standard library's that each
        /// job's deadline went through with calls and 128-bit arithmetic.
        let start = MonotonicClock.nanoseconds()
        let state: Mutex<State>
        let wake = DispatchSemaphore(value: 0)

        init(tick: Duration, slotCount: Int) {
            tickNanoseconds = max(1, tick.wholeNanoseconds)
            self.slotCount = slotCount
            state = Mutex(State(slots: Array(repeating: [:], count: slotCount)))
        }

        /// The ticks from ``start`` to the monotonic nanosecond `instant`, rounded down (0 before the start).
        func tickIndex(_ instant: UInt64) -> UInt64 {
            instant <= start ? 0 : (instant - start) / tickNanoseconds
        }

        /// The first tick that begins at or after `instant`: processing it can never be early.
        func dueTick(_ instant: UInt64) -> UInt64 {
            guard instant > start else { return 0 }
            let elapsed = instant - start
            return elapsed / tickNanoseconds + (elapsed % tickNanoseconds == 0 ? 0 : 1)
        }

        /// Schedules `action` `delay` after `instant` (monotonic nanoseconds, read by the caller).
        func schedule(after delay: Duration, now instant: UInt64, _ action: @escaping @Sendable () -> Void) -> EffectDeadlineToken {
            let now = tickIndex(instant)
            let (token, mustWake) = state.withLock { state in
                let due = dueTick(instant.saturatingAdd(state.nanoseconds(delay)))
                if state.count == 0 {
                    // Nothing is pending, so no slot can be skipped: jump the cursor to now
                    // rather than have the thread walk every tick it slept through.
                    state.processedTick = max(state.processedTick, now)
                }
                // A deadline already due goes in the next slot the thread processes.
                let tick = max(due, state.processedTick &+ 1)
                let slot = Int(tick % UInt64(slotCount))
                state.nextID &+= 1
                state.slots[slot][state.nextID] = Entry(id: state.nextID, dueTick: tick, action: action)
                state.count += 1
                let mustWake = state.idle
                state.idle = false
                return (EffectDeadlineToken(id: state.nextID, slot: slot), mustWake)
            }
            if mustWake { wake.signal() }
            return token
        }

        func cancel(_ token: EffectDeadlineToken) -> Bool {
            guard token.slot >= 0, token.slot < slotCount else { return false }
            return state.withLock { state in
                guard state.slots[token.slot].removeValue(forKey: token.id) != nil || state.firing.remove(token.id) != nil else {
                    return false
                }
                state.count -= 1
                return true
            }
        }

        var pendingCount: Int { state.withLock { $0.count } }

        func close() {
            let mustWake = state.withLock { state in
                state.closed = true
                defer { state.idle = false }
                return state.idle
            }
            if mustWake { wake.signal() }
        }

        /// The thread's loop: fire what is due, sleep to the next tick, or wait while empty.
        func run() {
            while true {
                let target = tickIndex(MonotonicClock.nanoseconds())
                let (due, idle, closed) = state.withLock { state in
                    if state.closed { return ([Entry](), false, true) }
                    let due = collectDue(upTo: target, in: &state)
                    if state.count == 0 && due.isEmpty {
                        state.idle = true
                        return (due, true, false)
                    }
                    return (due, false, false)
                }
                if closed { return }
                // Outside the lock: an action may cancel a task, which may schedule again. Each
                // entry is claimed first, so a cancel that comes before its turn still stops it.
                for entry in due {
                    let claimed = state.withLock { state in
                        guard state.firing.remove(entry.id) != nil else { return false }
                        state.count -= 1
                        return true
                    }
                    if claimed { entry.action() }
                }
                if idle {
                    wake.wait()
                } else {
                    sleepUntil(tick: target &+ 1)
                }
            }
        }

        /// Removes and returns the entries due at or before `target`, slot by slot from the one
        /// after the last processed.
        private func collectDue(upTo target: UInt64, in state: inout State) -> [Entry] {
            guard target > state.processedTick else { return [] }
            var due: [Entry] = []
            // A thread that fell a whole turn behind visits every slot once.
            let first = max(state.processedTick &+ 1, target >= UInt64(slotCount) ? target - UInt64(slotCount) + 1 : 0)
            var tick = first
            while tick <= target {
                let slot = Int(tick % UInt64(slotCount))
                if !state.slots[slot].isEmpty {
                    let ready = state.slots[slot].filter { $0.value.dueTick <= target }
                    for (id, entry) in ready {
                        state.slots[slot].removeValue(forKey: id)
                        state.firing.insert(id)
                        due.append(entry)
                    }
                }
                tick &+= 1
            }
            state.processedTick = target
            // Fire in deadline order, then in scheduling order.
            return due.count > 1 ? due.sorted { ($0.dueTick, $0.id) < ($1.dueTick, $1.id) } : due
        }

        /// Sleeps until tick `tick` has begun (nanosleep: no Dispatch timer).
        private func sleepUntil(tick: UInt64) {
            let wakeAt = start &+ tick &* tickNanoseconds
            var now = MonotonicClock.nanoseconds()
            while now < wakeAt {
                let remaining = wakeAt - now
                var request = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
                _ = nanosleep(&request, nil)
                now = MonotonicClock.nanoseconds()
            }
        }
    }
}
