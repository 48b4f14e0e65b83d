/// The effect handler of a composed app: each effect runs on the first part that takes it.
///
/// An effect no part takes fails with ``UnhandledEffect`` (the runtime's retries and the
/// reactor's failure hook then apply as for any error).
public struct ComposedEffects<Effect: Codable & Sendable, Mutation: Codable & Sendable>: EffectHandler {
    /// The parts, asked in order.
    public let parts: [PartEffects<Effect, Mutation>]

    /// Routes effects to `parts`.
    public init(_ parts: [PartEffects<Effect, Mutation>]) {
        self.parts = parts
    }

    public func run(_ effect: Effect, emit: Emitter<Mutation>) async throws {
        for part in parts where try await part.run(effect, emit: emit) { return }
        throw UnhandledEffect(kind: EffectKind.caseName(of: effect), parts: parts.map(\.name))
    }

    /// Only the part named `name` (what a worker serving one part runs), or `nil` if none is.
    public func only(_ name: String) -> ComposedEffects? {
        let chosen = parts.filter { $0.name == name }
        return chosen.isEmpty ? nil : ComposedEffects(chosen)
    }
}

/// A composed app's effect that none of the handler's parts runs.
public struct UnhandledEffect: Error, Hashable, Sendable, CustomStringConvertible {
    /// The effect's case name.
    public var kind: String
    /// The parts the handler has.
    public var parts: [String]

    public var description: String {
        "no part of this handler runs effect '\(kind)' (parts: \(parts.joined(separator: ", ")))"
    }
}
