import MessagePack

/// Says in one line why an app value (an action, a mutation) did not decode, in the app's
/// terms: which enum case is unknown, or which field at which path is wrong, instead of
/// Swift's `DecodingError` dump ("Invalid number of keys found, expected one.").
package enum AppValueError {
    package static func describe(_ error: any Error, payload: [UInt8], type: Any.Type) -> String {
        // `Counter.Action`, not `Action` nor `ReactorApps.Counter.Action`.
        let typeName = String(reflecting: type).split(separator: ".").dropFirst().joined(separator: ".")
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .typeMismatch(_, let context) where context.codingPath.isEmpty && context.debugDescription.hasPrefix("Invalid number of keys"):
            // Synthesized enum decoding: the map's key names no case of the enum.
            if case .map(let entries)? = try? MessagePackValue(unpacking: payload), entries.count == 1, case .string(let name) = entries[0].0 {
                return "'\(name)' is not a case of \(typeName)"
            }
            return "\(typeName): \(context.debugDescription) (an enum case is a map with one key, the case name)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(typeName)\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(typeName)\(path(context.codingPath)): the field '\(key.stringValue)' is missing"
        @unknown default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "" : " at " + keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
