import ReactorApps
import ReactorCore

/// Code that works for any app: the registry calls it with the app's concrete types.
protocol AppVisitor {
    associatedtype Result
    func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Result
        where H.Effect == R.Effect, H.Mutation == R.Mutation
}

/// The apps built into reactor-node, by name.
enum AppRegistry {
    /// Names accepted by `--app`.
    static let names = ["counter", "primes", "inventory"]

    /// Calls `visitor` with the app called `name`.
    /// - Parameter effectDelay: extra time each counter effect takes (for demos and tests).
    static func visit<V: AppVisitor>(_ name: String, effectDelay: Duration = .zero, _ visitor: V) async throws -> V.Result {
        switch name {
        case "counter": try await visitor.visit(reactor: Counter(), effects: CounterEffects(delay: effectDelay))
        case "primes": try await visitor.visit(reactor: Primes(), effects: PrimesEffects())
        case "inventory": try await visitor.visit(reactor: Inventory(), effects: InventoryEffects())
        default: throw CLIError.usage("unknown app '\(name)'; known apps: \(names.joined(separator: ", "))")
        }
    }
}
