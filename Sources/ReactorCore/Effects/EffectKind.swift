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
