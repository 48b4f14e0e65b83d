/// A type whose `init(from:)` and `encode(to:)` run on every decode and encode, also when its
/// values are small and plain: for a conformance that does more than read its bytes or write its
/// value (reads a clock, counts its calls). The MessagePack coders otherwise run `Codable` once
/// per distinct small plain value and thread (see ``MessagePackDecoder/remembersPlainValues``).
public protocol CodedEachTime {}
