import CZMQ

/// Library-wide facts about the linked libzmq: its version and its optional capabilities.
///
/// All members are safe to call from any thread.
package enum ZMQ {
    /// A libzmq version number, e.g. `4.3.4`.
    package struct Version: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Major version.
        package let major: Int
        /// Minor version.
        package let minor: Int
        /// Patch level.
        package let patch: Int

        /// Creates a version value.
        package init(major: Int, minor: Int, patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        /// `major.minor.patch`.
        package var description: String { "\(major).\(minor).\(patch)" }

        /// Orders versions by major, then minor, then patch.
        package static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }
    }

    /// The version of the libzmq library linked at run time (`zmq_version`).
    package static var version: Version {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return Version(major: Int(major), minor: Int(minor), patch: Int(patch))
    }

    /// Whether libzmq was built with a capability such as `"curve"`, `"ipc"` or `"draft"` (`zmq_has`).
    package static func hasCapability(_ name: String) -> Bool {
        zmq_has(name) != 0
    }
}
