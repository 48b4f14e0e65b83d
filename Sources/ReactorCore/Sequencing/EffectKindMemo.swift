/// Remembers the kind (``Reactor/kind(of:)``) of effect values that are plain bytes, so that the
/// sequencer works out each distinct value's kind once instead of once per job.
///
/// The default kind is the effect's enum case name, found by reflection (`Mirror`): on the
/// authority that was the costliest step of opening a job. Most effects that run often are
/// small plain values (`.refresh`, `.slowIncrease`, `.fetch(id: 7)`): a trivially copyable value
/// of at most 16 bytes is remembered under its bytes, which are the whole value, so equal bytes
/// are the same effect and, `kind(of:)` being a function of the effect, the same kind. Other
/// values (a `String` payload, a larger struct) are asked each time. At most ``limit`` values
/// are remembered, so a payload that takes many values costs a bounded table.
@usableFromInline
struct EffectKindMemo: Sendable {
    @usableFromInline var kinds: [EffectBits: String] = [:]

    /// How many distinct values are remembered at most.
    @usableFromInline static var limit: Int { 256 }

    @inlinable init() {}

    /// The kind of `effect`, from the table when its bytes are there.
    @inlinable
    mutating func kind<R: Reactor>(of effect: R.Effect, in reactor: R) -> String {
        guard let bits = EffectBits(effect) else { return reactor.kind(of: effect) }
        if let known = kinds[bits] { return known }
        let kind = reactor.kind(of: effect)
        if kinds.count < Self.limit { kinds[bits] = kind }
        return kind
    }
}

/// The bytes of a trivially copyable value of at most 16 bytes, zero-padded: all there is to it.
@usableFromInline
struct EffectBits: Hashable, Sendable {
    @usableFromInline var low: UInt64 = 0
    @usableFromInline var high: UInt64 = 0

    /// `nil` for a value that holds references or more than 16 bytes: its bytes are not all of it.
    @inlinable
    init?<T>(_ value: T) {
        guard _isPOD(T.self), MemoryLayout<T>.size <= MemoryLayout<EffectBits>.size else { return nil }
        withUnsafeBytes(of: value) { source in
            withUnsafeMutableBytes(of: &self) { $0.copyMemory(from: source) }
        }
    }
}
