import ReactorWire

/// A data directory whose snapshot or journal is intact but does not decode as this build's
/// app: its `State`, `Action` or `Mutation` changed shape since the files were written. Nothing
/// is served, nothing is changed on disk.
public struct RecoveryError: Error, Sendable, CustomStringConvertible {
    /// The snapshot file, or the journal record's LSN.
    public var source: String
    /// What did not decode, in the app's terms (the type, the field and its path).
    public var detail: String

    public var description: String {
        "\(source) does not decode with this build's types: \(detail). The app's types changed shape "
            + "since it was written: give new fields a default when decoding (a custom init(from:) with "
            + "decodeIfPresent), keep removed or renamed enum cases decodable, or run the build that wrote it; "
            + "the files are left as they are"
    }

    static func snapshot(_ file: String, _ error: any Error, type: Any.Type) -> RecoveryError {
        RecoveryError(source: "snapshot \(file)", detail: AppValueError.describe(error, type: type))
    }

    static func record(_ lsn: UInt64, _ error: any Error, type: Any.Type) -> RecoveryError {
        RecoveryError(source: "journal record \(lsn)", detail: AppValueError.describe(error, type: type))
    }
}
