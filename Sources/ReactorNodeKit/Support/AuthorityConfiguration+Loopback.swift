import ReactorBus

extension AuthorityConfiguration {
    /// An authority for `app` on ephemeral loopback ports (`tcp://127.0.0.1:*`), for one-process runs.
    static func loopback(app: String) -> AuthorityConfiguration {
        AuthorityConfiguration(appName: app, actionsEndpoint: "tcp://127.0.0.1:*", workersEndpoint: "tcp://127.0.0.1:*", feedEndpoint: "tcp://127.0.0.1:*")
    }
}
