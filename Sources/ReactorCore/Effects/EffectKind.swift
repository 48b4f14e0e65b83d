/// Derives the default kind name of an effect from its enum case.
public enum EffectKind {
    /// The case name of an enum value (`"slowIncrease"` for `.slowIncrease(by: 2)`),
    /// or the type's description for values that are not enums with a payload.
    public static func caseName<T>(of value: T) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .enum, let label = mirror.children.first?.label {
            return label
        }
        return String(describing: value)
    }
}

extension EffectKind {
    /// Whether a worker that announced `kinds` serves `kind`: no kinds means every kind; a kind
    /// ending in `.*` (a composed app's part, `cart.*`) serves every kind with that prefix.
    public static func serves(_ kinds: some Collection<String>, kind: String) -> Bool {
        kinds.isEmpty || kinds.contains(kind) || kinds.contains { $0.hasSuffix(".*") && kind.hasPrefix($0.dropLast()) }
    }
}
