import ArgumentParsing

/// The values of an app's own options (``AppOption``), as given on the command line or in the
/// environment, handed to the app's effect-handler factory.
public struct AppOptionValues: Sendable {
    let arguments: ParsedArguments?

    /// The text given for `name`, or `nil` when it was not given.
    public func string(_ name: String) -> String? { arguments?.string(name) }

    /// A duration given in seconds (`2`, `0.005`), or `nil` when it was not given.
    /// - Throws: ``AppOptionError`` when the text is not a positive number of seconds.
    public func seconds(_ name: String) throws(AppOptionError) -> Duration? {
        guard let arguments else { return nil }
        do {
            return try arguments.seconds(name)
        } catch {
            throw AppOptionError(error.message)
        }
    }
}
