import ArgumentParsing
import ReactorBus

extension AuthorityConfiguration {
    /// An authority for `app` (its name and schema) bound where `--actions`, `workersFlag` and
    /// `--feed` say (checked as endpoints to bind), for `authority` and `run`.
    static func binding(app: App, _ arguments: ParsedArguments, workersFlag: String) throws -> AuthorityConfiguration {
        var configuration = AuthorityConfiguration(
            appName: app.name,
            actionsEndpoint: try Endpoint.validate(try arguments.required("actions"), flag: "actions", binding: true),
            workersEndpoint: try Endpoint.validate(try arguments.required(workersFlag), flag: workersFlag, binding: true),
            feedEndpoint: try Endpoint.validate(try arguments.required("feed"), flag: "feed", binding: true)
        )
        configuration.schema = app.schema
        return configuration
    }

    /// An authority for `app` on ephemeral loopback ports (`tcp://127.0.0.1:*`), for one-process runs.
    static func loopback(app: String) -> AuthorityConfiguration {
        AuthorityConfiguration(appName: app, actionsEndpoint: "tcp://127.0.0.1:*", workersEndpoint: "tcp://127.0.0.1:*", feedEndpoint: "tcp://127.0.0.1:*")
    }
}
