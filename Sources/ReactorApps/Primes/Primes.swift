import ReactorCore

/// Factorises numbers on workers: an app whose effects do real, checkable work and emit several
/// mutations each (one per prime factor, then `finished`).
///
/// - `{"factor":{"n":360}}` factorises 360 wherever a worker is free;
/// - `{"factorInOrder":{"n":97,"delayMs":50}}` waits `delayMs` first and runs in the `ordered`
///   lane, so results appear in the order the actions were accepted even when a later one
///   finishes first;
/// - factorising 0 fails, and the failure hook records why.
///
/// The state is checkable: every completed entry's factors are primes whose product is `n`.
public struct Primes: Reactor {
    /// What a client can ask for.
    public enum Action: Codable, Sendable, Equatable {
        case factor(n: UInt64)
        case factorInOrder(n: UInt64, delayMs: UInt32)
    }

    /// Changes to the state.
    public enum Mutation: Codable, Sendable, Equatable {
        case requested(n: UInt64)
        case prime(n: UInt64, factor: UInt64)
        case finished(n: UInt64)
        case failed(n: UInt64, reason: String)
    }

    /// The work to run on a worker.
    public enum Effect: Codable, Sendable, Equatable {
        case factorize(n: UInt64, delayMs: UInt32, ordered: Bool)
    }

    /// One number and the prime factors found so far (with multiplicity, ascending).
    public struct Factorization: Codable, Sendable, Equatable {
        public var n: UInt64
        public var factors: [UInt64]

        public init(n: UInt64, factors: [UInt64]) {
            self.n = n
            self.factors = factors
        }
    }

    /// Requests, work in progress, results in the order they completed, failures.
    public struct State: Codable, Sendable, Equatable {
        public var requested: Int = 0
        public var working: [Factorization] = []
        public var completed: [Factorization] = []
        public var failures: [String] = []

        public init() {}
    }

    /// The lane of `factorInOrder` effects.
    public static let orderedLane = "ordered"

    public init() {}

    public var initialState: State { State() }

    public func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
        switch action {
        case .factor(let n):
            Mutations(sync: [.requested(n: n)], async: [.factorize(n: n, delayMs: 0, ordered: false)])
        case .factorInOrder(let n, let delayMs):
            Mutations(sync: [.requested(n: n)], async: [.factorize(n: n, delayMs: delayMs, ordered: true)])
        }
    }

    public func reduce(state: inout State, mutation: Mutation) {
        switch mutation {
        case .requested:
            state.requested += 1
        case .prime(let n, let factor):
            if let index = state.working.firstIndex(where: { $0.n == n }) {
                state.working[index].factors.append(factor)
            } else {
                state.working.append(Factorization(n: n, factors: [factor]))
            }
        case .finished(let n):
            if let index = state.working.firstIndex(where: { $0.n == n }) {
                state.completed.append(state.working.remove(at: index))
            } else {
                state.completed.append(Factorization(n: n, factors: []))
            }
        case .failed(let n, let reason):
            state.working.removeAll { $0.n == n }
            state.failures.append("\(n): \(reason)")
        }
    }

    public func failed(effect: Effect, error: EffectFailure) -> [Mutation] {
        switch effect {
        case .factorize(let n, _, _): [.failed(n: n, reason: error.message)]
        }
    }

    public func lane(for effect: Effect) -> String? {
        switch effect {
        case .factorize(_, _, let ordered): ordered ? Self.orderedLane : nil
        }
    }
}

/// Runs `factorize` by trial division, emitting each prime factor as it is found.
public struct PrimesEffects: EffectHandler {
    /// Thrown for numbers that have no prime factorisation.
    public struct NotFactorizable: Error, CustomStringConvertible {
        public let n: UInt64
        public var description: String { "\(n) has no prime factorisation" }
    }

    public init() {}

    public func run(_ effect: Primes.Effect, emit: Emitter<Primes.Mutation>) async throws {
        switch effect {
        case .factorize(let n, let delayMs, _):
            if delayMs > 0 { try await EffectClock.sleep(for: .milliseconds(Int(delayMs))) }
            guard n >= 1 else { throw NotFactorizable(n: n) }
            for factor in Self.primeFactors(of: n) {
                await emit(.prime(n: n, factor: factor))
            }
            await emit(.finished(n: n))
        }
    }

    /// The prime factors of `n` (with multiplicity, ascending); empty for 0 and 1.
    public static func primeFactors(of n: UInt64) -> [UInt64] {
        guard n > 1 else { return [] }
        var rest = n
        var factors: [UInt64] = []
        var divisor: UInt64 = 2
        while divisor <= rest / divisor {
            while rest % divisor == 0 {
                factors.append(divisor)
                rest /= divisor
            }
            divisor += divisor == 2 ? 1 : 2
        }
        if rest > 1 { factors.append(rest) }
        return factors
    }
}
