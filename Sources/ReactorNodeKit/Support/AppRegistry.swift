import ArgumentParsing

/// The apps one node program was given, by name: what `--app` chooses from.
struct AppRegistry: Sendable {
    let apps: [App]

    /// - Throws: ``CLIError/configuration(_:)`` for no apps, an empty name or a name given twice.
    init(_ apps: [App]) throws(CLIError) {
        guard !apps.isEmpty else { throw .configuration("no apps registered: pass at least one App to ReactorNodeKit.main(apps:)") }
        var seen: Set<String> = []
        for app in apps {
            guard !app.name.isEmpty else { throw .configuration("an app has an empty name") }
            guard seen.insert(app.name).inserted else { throw .configuration("two apps are named '\(app.name)'") }
        }
        self.apps = apps
    }

    /// Names accepted by `--app`, in registration order.
    var names: [String] { apps.map(\.name) }

    /// `--app NAME`: optional (defaulting to it) when only one app is registered.
    var appOption: Option {
        let list = names.joined(separator: ", ")
        return names.count == 1 ? .value("app", "NAME", help: "the app: \(list)", default: names[0]) : .value("app", "NAME", help: "the app: \(list)")
    }

    /// Every app's own options (``AppOption``), once each, for the commands that run effects.
    var effectOptions: [Option] {
        var seen: Set<String> = []
        return apps.flatMap(\.options).filter { seen.insert($0.name).inserted }.map(\.option)
    }

    /// The app `--app` names; a usage error listing the registered names otherwise.
    func app(_ arguments: ParsedArguments) throws(CLIError) -> App {
        let list = names.joined(separator: ", ")
        guard let name = arguments.string("app") else {
            throw .usage("\(arguments.command): missing '--app NAME' (or REACTOR_APP); registered apps: \(list)")
        }
        guard let app = apps.first(where: { $0.name == name }) else {
            throw .usage("unknown app '\(name)'; known apps: \(list)")
        }
        return app
    }

    /// Calls `visitor` with the typed reactor and effect handler of the app `--app` names.
    /// `part`: only that part's effect handler, of a composed app (`worker --part`).
    func visit<V: AppVisitor>(_ arguments: ParsedArguments, _ visitor: V, part: String? = nil) async throws -> V.Result {
        try await app(arguments).box.accept(visitor, options: AppOptionValues(arguments: arguments), part: part)
    }
}
