import Foundation
import TestSupport

/// Where the tests put packages that depend on this one, and the one scratch directory all of
/// them build in (`make test-swift` builds examples/OrderFulfilment there too): this package's
/// modules are compiled once for all of them, and later only what changed, instead of the whole
/// package again for each (minutes each on 2 shared cores).
enum DependentPackages {
    /// The shared `--scratch-path`, inside this package's own build directory.
    static var scratch: String { ChildProcess.packageRoot + "/.build/dependents" }

    /// The directory of the dependent package `name`; kept between runs, so that an unchanged
    /// package is not rebuilt.
    static func directory(_ name: String) -> String { ChildProcess.packageRoot + "/.build/dependent-packages/" + name }

    /// Writes `files` (paths relative to `directory` → contents) into `directory`: a file whose
    /// contents did not change is left alone (a rewrite would rebuild it), and every other Swift
    /// file there is deleted (a file the package no longer has must not be compiled).
    static func write(_ files: [String: String], to directory: String) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for path in manager.subpaths(atPath: directory) ?? [] where path.hasSuffix(".swift") && files[path] == nil {
            try manager.removeItem(atPath: directory + "/" + path)
        }
        for (path, contents) in files {
            let target = directory + "/" + path
            if (try? String(contentsOfFile: target, encoding: .utf8)) == contents { continue }
            try manager.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try contents.write(toFile: target, atomically: true, encoding: .utf8)
        }
    }
}
