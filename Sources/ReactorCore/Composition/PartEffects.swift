/// The effect handler of one part of a composed app: it runs the parent's effects that belong
/// to the part (with the child's own handler) and declines the others.
///
/// Made by ``Scope/effects(_:)``; ``ComposedEffects`` routes each effect to the part that takes
/// it. A worker that serves one part only runs with that part's handler alone.
public struct PartEffects<Effect: Codable & Sendable, Mutation: Codable & Sendable>: Sendable {
    /// The part's name (its scope's), the prefix of its kinds.
    public let name: String
    private let body: @Sendable (Effect, Emitter<Mutation>) async throws -> Bool

    /// Runs `handler` for the effects `extract` finds, emitting its mutations through `embed`.
    public init<H: EffectHandler>(name: String, handler: H, embed: @escaping @Sendable (H.Mutation) -> Mutation,
                                  extract: @escaping @Sendable (Effect) -> H.Effect?) {
        self.name = name
        body = { effect, emit in
            guard let own = extract(effect) else { return false }
            try await handler.run(own, emit: Emitter { _, mutation in await emit(embed(mutation)) })
            return true
        }
    }

    /// Runs `handler` for every effect (a parent's handler of its own effects).
    public init<H: EffectHandler>(name: String, handler: H) where H.Effect == Effect, H.Mutation == Mutation {
        self.init(name: name, handler: handler, embed: { $0 }, extract: { $0 })
    }

    /// Runs `effect` if it is the part's; `false` (nothing run) otherwise.
    public func run(_ effect: Effect, emit: Emitter<Mutation>) async throws -> Bool {
        try await body(effect, emit)
    }
}
