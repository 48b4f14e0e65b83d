import Foundation

/// The process environment, for options that come from `REACTOR_*` variables.
enum ProcessInfoEnvironment {
    static var current: [String: String] { ProcessInfo.processInfo.environment }
}
