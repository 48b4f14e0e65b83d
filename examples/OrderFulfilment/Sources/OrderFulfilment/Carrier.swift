/// The parcel carrier, as the effects see it: takes a parcel, answers with a tracking number.
///
/// Simulated here: it refuses a parcel without an address, and takes any other.
public struct Carrier: Sendable {
    /// The parcel has no address to go to.
    public struct NoAddress: Error, CustomStringConvertible {
        public var description: String { "no address" }
    }

    public init() {}

    /// Hands the parcel of `order` to the carrier; returns its tracking number.
    public func ship(order: String, address: String) async throws -> String {
        guard !address.isEmpty else { throw NoAddress() }
        return "TRACK-\(order)"
    }
}
