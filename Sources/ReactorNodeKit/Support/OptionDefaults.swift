import ReactorBus

/// The defaults the CLI's options show and use, read from the configuration types' own defaults.
///
/// A node's defaults are written once, in its configuration type (the library's API); the option
/// specs, their `--help` text and the fallbacks in each command's `run` take them from here, so
/// the CLI and the library cannot drift apart. Endpoints and CLI-only knobs (`--repeat`, `--once`
/// timeouts, ...) have no configuration field: their defaults stay in the option specs.
enum OptionDefaults {
    /// An authority configuration with every default (the endpoints are the CLI's own).
    static let authority = AuthorityConfiguration(appName: "", actionsEndpoint: "", workersEndpoint: "", feedEndpoint: "")
    /// A persistence configuration with every default.
    static let persistence = PersistenceConfiguration(directory: "")
    /// A worker configuration with every default (the name is computed per process).
    static let worker = WorkerConfiguration(authorityEndpoint: "", appName: "", name: "")
    /// A client configuration with every default (the client id is a fresh UUID per process).
    static let client = ActionClientConfiguration(actionsEndpoint: "", clientID: "")

    /// `--snapshot-replica-above`'s default text: the persistence default's bytes, or `off`.
    static var replicaSnapshotsAbove: String {
        persistence.replicaSnapshotsAbove.map(String.init) ?? "off"
    }

    /// A duration as the options take it: whole seconds (`60`), else decimal seconds (`0.5`).
    static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        guard fraction != 0 else { return String(whole) }
        return String(Double(whole) + Double(fraction) / 1e18)
    }

    /// A duration option's default text; `nil` (waits forever) has no default.
    static func seconds(_ duration: Duration?) -> String? {
        duration.map { seconds($0) }
    }
}
