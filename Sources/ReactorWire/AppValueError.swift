import MessagePack

/// Says in one line why an app value (an action, a mutation) did not decode, in the app's
/// terms: which enum case is unknown and which cases the enum has, or which field at which
/// path is wrong, instead of Swift's `DecodingError` dump ("Invalid number of keys found,
/// expected one.").
package enum AppValueError {
    package static func describe(_ error: any Error, type: Any.Type) -> String {
        let typeName = name(of: type)
        guard let error = error as? DecodingError else { return "\(error)" }
        // The decoder saw a map whose one key names no case of the enum.
        if case .typeMismatch(let enumType, let context) = error, let unknown = context.underlyingError as? UnknownEnumCase {
            let sentence = unknownCase(unknown, of: enumType)
            return context.codingPath.isEmpty ? sentence : "\(typeName)\(path(context.codingPath)): \(sentence)"
        }
        switch error {
        case .typeMismatch(_, let context) where context.codingPath.isEmpty && context.debugDescription.hasPrefix("Invalid number of keys"):
            return "\(typeName): \(context.debugDescription) (an enum case is a map with one key, the case name)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(typeName)\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(typeName)\(path(context.codingPath)): the field '\(key.stringValue)' is missing"
        @unknown default:
            return "\(error)"
        }
    }

    /// `'dance' is not a case of Counter.Action; its cases are countUp, countUpAsync`.
    private static func unknownCase(_ unknown: UnknownEnumCase, of enumType: Any.Type) -> String {
        let cases = unknown.knownCases.isEmpty ? "" : "; its cases are " + unknown.knownCases.joined(separator: ", ")
        return "'\(unknown.name)' is not a case of \(name(of: enumType))\(cases)"
    }

    /// `Counter.Action`, not `Action` nor `ReactorApps.Counter.Action`.
    private static func name(of type: Any.Type) -> String {
        String(reflecting: type).split(separator: ".").dropFirst().joined(separator: ".")
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "" : " at " + keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
