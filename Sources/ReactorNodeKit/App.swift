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
    let box: any AppBox
    /// The app's subscription handler (an `any SubscriptionHandler` of the reactor's types), or
    /// `nil` for an app without subscriptions; the commands that run effects cast it back.
    var subscriptionHandler: (any Sendable)?

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
        self.subscriptionHandler = subscriptions as any SubscriptionHandler<R.Subscription, R.Action>
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
        self.box = TypedApp(reactor: reactor, makeEffects: effects)
    }
}

/// The typed app behind an ``App``.
protocol AppBox: Sendable {
    func accept<V: AppVisitor>(_ visitor: V, options: AppOptionValues) async throws -> V.Result
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

    func accept<V: AppVisitor>(_ visitor: V, options: AppOptionValues) async throws -> V.Result {
        let effects: H
        do {
            effects = try makeEffects(options)
        } catch {
            throw CLIError.usage(error.message)
        }
        return try await visitor.visit(reactor: reactor, effects: effects)
    }
}
