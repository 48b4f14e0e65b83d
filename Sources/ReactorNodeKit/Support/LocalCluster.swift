import ReactorBus
import ReactorCore
import ReactorLog
import ZeroMQ

/// An authority, its workers and an observer of one app in this process, over real ZeroMQ
/// sockets (loopback by default): what `demo` and `run` start.
struct LocalCluster<R: Reactor, H: EffectHandler>: Sendable where H.Effect == R.Effect, H.Mutation == R.Mutation {
    let authority: AuthorityNode<R>
    let endpoints: AuthorityNode<R>.Endpoints
    let workers: [WorkerNode<R, H>]
    /// Created, not started: subscribe to its streams first, then call `start()`.
    let observer: Observer<R>
    private let context: ZMQContext

    /// Starts the authority (binding its endpoints) and `workerCount` workers connected to it.
    ///
    /// - Throws: what ``AuthorityNode/start()`` throws (the authority is stopped again), or what
    ///   a worker's start throws (everything started is stopped again).
    init(reactor: R, effects: H, subscriptions: (any SubscriptionHandler<R.Subscription, R.Action>)? = nil,
         configuration: AuthorityConfiguration, workerCount: Int, workerConcurrency: Int = 8,
         context: ZMQContext, logger: Logger) async throws {
        self.context = context
        authority = try AuthorityNode(reactor: reactor, configuration: configuration, logger: logger.labelled("authority"), context: context)
        do {
            endpoints = try await authority.start()
        } catch {
            authority.stop()
            await authority.wait()
            throw error
        }
        let app = configuration.appName
        let endpoints = self.endpoints
        workers = (0..<workerCount).map { index in
            var worker = WorkerConfiguration(authorityEndpoint: endpoints.workers, appName: app, name: "worker-\(index + 1)", concurrency: workerConcurrency)
            worker.schemaVersion = configuration.schema.version
            return WorkerNode(reactor: reactor, effects: effects, subscriptions: subscriptions, configuration: worker,
                              logger: logger.labelled("worker-\(index + 1)"), context: context)
        }
        let observerConfiguration = ObserverConfiguration(feedEndpoint: endpoints.feed, actionsEndpoint: endpoints.actions)
        do {
            for worker in workers { try worker.start() }
            observer = try Observer<R>(configuration: observerConfiguration, logger: logger.labelled("observer"), context: context)
        } catch {
            for worker in workers { worker.stop() }
            for worker in workers { await worker.wait() }
            authority.stop()
            await authority.wait()
            throw error
        }
    }

    /// A started client of the cluster's authority (close it before ``shutdown()``).
    func client(logger: Logger) throws -> ActionClient<R> {
        let client = try ActionClient<R>(configuration: ActionClientConfiguration(actionsEndpoint: endpoints.actions), logger: logger.labelled("client"), context: context)
        try client.start()
        return client
    }

    /// Stops the observer, then the workers (running effects finish), then the authority (which
    /// finishes its batch and, with persistence, writes a snapshot), waiting for each.
    func shutdown() async {
        observer.stop()
        await observer.wait()
        for worker in workers { worker.stop() }
        for worker in workers { await worker.wait() }
        authority.stop()
        await authority.wait()
    }
}
