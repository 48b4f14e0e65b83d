import Foundation

/// Whether `python3` runs and imports the modules the Python-driven tests need
/// (scripts/ensure-deps.sh --python): actually tried, so a test is skipped only when the script
/// could not run at all.
enum Python {
    /// `interpreter`: `python3` on the PATH, or a path (`/usr/bin/python3` sees Debian's
    /// `python3-*` packages, which another python3 first on the PATH may not).
    static func imports(_ modules: String, interpreter: String = "python3") -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [interpreter, "-c", "import \(modules)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        process.waitUntilExit()
        return process.terminationReason == .exit && process.terminationStatus == 0
    }
}
