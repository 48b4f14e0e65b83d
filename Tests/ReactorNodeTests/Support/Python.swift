import Foundation

/// Whether `python3` runs and imports the modules the Python-driven tests need
/// (scripts/ensure-deps.sh --python): actually tried, so a test is skipped only when the script
/// could not run at all.
enum Python {
    static func imports(_ modules: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import \(modules)"]
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
