import Foundation

/// The package docs/GUIDE.md builds up: each ```` ```swift ```` block goes to the file its first
/// line names (`// Sources/LibraryApp/Library.swift`), blocks naming the same file joined in
/// order; the block that starts with `// swift-tools-version:` is `Package.swift` (that line must
/// be a manifest's first, so a reader can copy the block as it is). Blocks in other languages
/// (`sh`, `text`, `yaml`, ...) are not code.
struct GuidePackage {
    /// A ```` ```swift ```` block that names no file.
    struct UnnamedBlock: Error, CustomStringConvertible {
        var line: Int
        var description: String { "docs/GUIDE.md line \(line): a swift block must start with '// swift-tools-version:', '// Sources/…swift' or '// Tests/…swift'" }
    }

    /// A manifest without exactly one versioned dependency to replace.
    struct NoVersionedDependency: Error, CustomStringConvertible {
        var found: Int
        var description: String { "docs/GUIDE.md's Package.swift must show one .package(url: …, from: …) dependency, found \(found)" }
    }

    /// File path → contents, without the line naming the file.
    let files: [String: String]
    /// The bodies of the ```` ```sh ```` blocks.
    let shellBlocks: [String]

    init(markdown: String) throws(UnnamedBlock) {
        var files: [String: String] = [:]
        var shellBlocks: [String] = []
        var open: (language: String, start: Int, lines: [String])?
        for (number, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if var block = open {
                guard line == "```" else {
                    block.lines.append(String(line))
                    open = block
                    continue
                }
                open = nil
                if block.language == "sh" { shellBlocks.append(block.lines.joined(separator: "\n")) }
                guard block.language == "swift" else { continue }
                guard let first = block.lines.first else { throw UnnamedBlock(line: block.start) }
                if first.hasPrefix("// swift-tools-version:") {
                    files["Package.swift", default: ""] += block.lines.joined(separator: "\n") + "\n"
                    continue
                }
                guard first.hasPrefix("// "), Self.isFileName(String(first.dropFirst(3))) else { throw UnnamedBlock(line: block.start) }
                let path = String(first.dropFirst(3))
                files[path, default: ""] += block.lines.dropFirst().joined(separator: "\n") + "\n"
            } else if line.hasPrefix("```") {
                open = (String(line.dropFirst(3)), number + 1, [])
            }
        }
        self.files = files
        self.shellBlocks = shellBlocks
    }

    static func isFileName(_ path: String) -> Bool {
        (path.hasPrefix("Sources/") || path.hasPrefix("Tests/")) && path.hasSuffix(".swift") && !path.contains(" ")
    }

    /// The guide's `.package(url: "…", from: "…")` line.
    static var versionedDependency: Regex<Substring> { #/\.package\(url: "[^"]+", from: "[0-9]+\.[0-9]+\.[0-9]+"\)/# }

    /// The files, with the manifest's versioned dependency replaced by this checkout at `root`
    /// (the URL in the guide is a placeholder, and the tests reach no network).
    func files(dependingOn root: String) throws(NoVersionedDependency) -> [String: String] {
        let manifest = files["Package.swift"] ?? ""
        let found = manifest.matches(of: Self.versionedDependency).count
        guard found == 1 else { throw NoVersionedDependency(found: found) }
        var files = self.files
        files["Package.swift"] = manifest.replacing(Self.versionedDependency, with: #".package(name: "ReactorBus", path: "\#(root)")"#)
        return files
    }
}
