import Foundation

/// Small file checks for commands.
enum FileManagerCheck {
    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
}
