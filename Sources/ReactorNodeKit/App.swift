import ReactorBus
import ReactorCore

/// One app a node can run: a name, a reactor and the handler of its effects.
///
/// `--app NAME` picks one of the apps given to ``ReactorNodeKit/main(apps:program:)``; the
/// authority, the workers, the clients and the observers of one deployment must name the same
/// app (the authority refuses workers of another). The value erases the reactor's and the
/// handler's types so that apps of different types fit in one list; the commands get them back,
/// fully typed, through a visitor.
public struct App: Sendable {
    /// The name `--app` takes and the wire carries (in snapshots and worker hellos).
    public let name: String
    /// Options of this app's own, accepted by the commands that run its effects (`worker`, `run`).
    public let options: [AppOption]
    /// The app's schema version and migrations (``AppSchema``): every command of this app speaks
    /// and checks it, and the authority migrates older data directories with it.
    public let schema: AppSchema
    /// The parts of a composed app (``ComposedEffects``), by name: `worker --part NAME` runs
    /// one of them only. Empty for other apps.
    public let parts: [String]
    let box: any AppBox
    /// The app's subscription handler (an `any SubscriptionHandler` of the reactor's types), or
    /// `nil` for an app without subscriptions; the commands that run effects cast it back.
    var subscriptionHandler: (any Sendable)? { subscriptionHandlers(nil) }
    /// The subscription handler of the whole app (`nil`) or of one part (a composed app's).
    private(set) var subscriptionHandlers: @Sendable (_ part: String?) -> (any Sendable)?

    /// An app whose effect handler needs no options.
    ///
    /// - Parameters:
    ///   - name: what `--app` takes, e.g. `"ledger"`.
    ///   - reactor: the state machine the authority runs.
    ///   - effects: what workers run for the reactor's effects.
    ///   - schema: the app's schema version and migrations (default: version 1).
    public init<R: Reactor, H: EffectHandler>(_ name: String, reactor: R, effects: H, schema: AppSchema = AppSchema())
        where H.Effect == R.Effect, H.Mutation == R.Mutation {
        self.init(name, reactor: reactor, options: [], schema: schema) { _ in effects }
    }

    /// An app with subscriptions (``Reactor/subscriptions(state:)``): `worker` (and `run`) run
    /// `subscriptions` next to `effects`, for the kinds given with `--kinds` (default: all).
    ///
    /// - Parameters:
    ///   - name: what `--app` takes.
    ///   - reactor: the state machine the authority runs.
    ///   - effects: what workers run for the reactor's effects.
    ///   - subscriptions: what workers run for the reactor's subscriptions.
    ///   - schema: the app's schema version and migrations (default: version 1).
    public init<R: Reactor, H: EffectHandler, S: SubscriptionHandler>(_ name: String, reactor: R, effects: H, subscriptions: S,
                                                                       schema: AppSchema = AppSchema())
        where H.Effect == R.Effect, H.Mutation == R.Mutation, S.Subscription == R.Subscription, S.Action == R.Action {
        self.init(name, reactor: reactor, options: [], schema: schema) { _ in effects }
        let handler = subscriptions as any SubscriptionHandler<R.Subscription, R.Action>
        self.subscriptionHandlers = { _ in handler }
    }

    /// An app whose effect handler is made from options of its own (a delay, a URL, ...).
    ///
    /// - Parameters:
    ///   - name: what `--app` takes.
    ///   - reactor: the state machine the authority runs.
    ///   - options: extra options of `worker` and `run` (and their `REACTOR_*` variables);
    ///     ignored when another app is chosen.
    ///   - effects: makes the handler from the values given; a thrown ``AppOptionError`` is a
    ///     usage error (exit 64). Every command that opens the app calls it once (the authority,
    ///     `send` and `observe` too, with no values), so keep it cheap: connect to outside
    ///     services in the handler's `run`, not here.
    ///   - schema: the app's schema version and migrations (default: version 1).
    public init<R: Reactor, H: EffectHandler>(_ name: String, reactor: R, options: [AppOption], schema: AppSchema = AppSchema(),
                                              effects: @escaping @Sendable (AppOptionValues) throws(AppOptionError) -> H)
        where H.Effect == R.Effect, H.Mutation == R.Mutation {
        self.name = name
        self.options = options
        self.schema = schema
        self.parts = []
        self.box = TypedApp(reactor: reactor, makeEffects: effects, restrict: nil)
        self.subscriptionHandlers = { _ in nil }
    }

    /// A composed app (``ComposedReactor``) whose effects run through its parts' handlers
    /// (each a ``Scope/effects(_:)``): a worker runs them all, or with `--part NAME` only one
    /// part's, announcing that part's kinds (`NAME.*`).
    ///
    /// - Parameters:
    ///   - name: what `--app` takes.
    ///   - reactor: the state machine the authority runs.
    ///   - parts: the handlers of the parts, named like their scopes.
    ///   - schema: the app's schema version and migrations (default: version 1).
    public init<R: Reactor>(_ name: String, reactor: R, parts: [PartEffects<R.Effect, R.Mutation>], schema: AppSchema = AppSchema()) {
        self.name = name
        self.options = []
        self.schema = schema
        self.parts = parts.map(\.name)
        let effects = ComposedEffects(parts)
        self.box = TypedApp(reactor: reactor, makeEffects: { _ in effects }, restrict: { $0.only($1) })
        self.subscriptionHandlers = { _ in nil }
    }

    /// A composed app whose parts also have subscriptions (each a ``Scope/subscriptions(_:)``):
    /// a worker runs every part's effects and subscriptions, or with `--part NAME` only that
    /// part's, announcing its kinds (`NAME.*`) for both.
    ///
    /// - Parameters:
    ///   - name: what `--app` takes.
    ///   - reactor: the state machine the authority runs.
    ///   - parts: the effect handlers of the parts, named like their scopes.
    ///   - subscriptions: the subscription handlers of the parts that have subscriptions.
    ///   - schema: the app's schema version and migrations (default: version 1).
    public init<R: Reactor>(_ name: String, reactor: R, parts: [PartEffects<R.Effect, R.Mutation>],
                            subscriptions: [PartSubscriptions<R.Subscription, R.Action>], schema: AppSchema = AppSchema()) {
        self.init(name, reactor: reactor, parts: parts, schema: schema)
        let all = ComposedSubscriptions(subscriptions)
        self.subscriptionHandlers = { part in
            guard let part else { return all as any SubscriptionHandler<R.Subscription, R.Action> }
            return all.only(part).map { $0 as any SubscriptionHandler<R.Subscription, R.Action> }
        }
    }
}

/// The typed app behind an ``App``.
protocol AppBox: Sendable {
    /// Calls `visitor` with the app's reactor and handler, or (`part`) the handler of that part only.
    func accept<V: AppVisitor>(_ visitor: V, options: AppOptionValues, part: String?) async throws -> V.Result
}

/// Code that works for any app: the registry calls it with the app's concrete types.
protocol AppVisitor {
    associatedtype Result
    func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Result
        where H.Effect == R.Effect, H.Mutation == R.Mutation
}

struct TypedApp<R: Reactor, H: EffectHandler>: AppBox where H.Effect == R.Effect, H.Mutation == R.Mutation {
    let reactor: R
    let makeEffects: @Sendable (AppOptionValues) throws(AppOptionError) -> H
    /// A composed app's handler restricted to one part (`nil`: the app has no parts).
    let restrict: (@Sendable (H, String) -> H?)?

    func accept<V: AppVisitor>(_ visitor: V, options: AppOptionValues, part: String?) async throws -> V.Result {
        var effects: H
        do {
            effects = try makeEffects(options)
        } catch {
            throw CLIError.usage(error.message)
        }
        if let part {
            guard let restricted = restrict?(effects, part) else { throw CLIError.usage("this app has no part '\(part)'") }
            effects = restricted
        }
        return try await visitor.visit(reactor: reactor, effects: effects)
    }
}
