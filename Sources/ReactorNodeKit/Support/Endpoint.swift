import Foundation

/// Checks ZeroMQ endpoints before any socket sees them, so a typo is a usage error.
enum Endpoint {
    /// Throws a usage error unless `text` looks like `tcp://HOST:PORT`, `ipc://PATH` or
    /// `inproc://NAME` (`*` as host and port when binding).
    static func validate(_ text: String, flag: String, binding: Bool) throws(CLIError) -> String {
        let hint = binding ? "e.g. tcp://*:7001 or tcp://127.0.0.1:7001" : "e.g. tcp://127.0.0.1:7001"
        func bad(_ why: String) -> CLIError { .usage("--\(flag) '\(text)': \(why) (\(hint))") }
        guard let schemeEnd = text.range(of: "://") else { throw bad("not an endpoint") }
        let scheme = text[..<schemeEnd.lowerBound]
        let rest = text[schemeEnd.upperBound...]
        switch scheme {
        case "tcp":
            guard let colon = rest.lastIndex(of: ":") else { throw bad("a tcp endpoint needs a port") }
            let host = rest[..<colon]
            let port = rest[rest.index(after: colon)...]
            guard !host.isEmpty else { throw bad("a tcp endpoint needs a host") }
            if port == "*" || port == "0" {
                guard binding else { throw bad("connect to a real port") }
            } else if let number = Int(port), (1...65_535).contains(number) {
                // fine
            } else {
                throw bad("'\(port)' is not a port")
            }
        case "ipc", "inproc":
            guard !rest.isEmpty else { throw bad("needs a name") }
        default:
            throw bad("unknown transport '\(scheme)'; use tcp, ipc or inproc")
        }
        return text
    }
}

extension Endpoint {
    /// Throws a usage error unless `text` is one endpoint (checked as ``validate(_:flag:binding:)``
    /// does) or several separated by commas, each valid; the error names the bad entry. Several
    /// endpoints are authorities that take over from one another, tried in order.
    static func validateList(_ text: String, flag: String) throws(CLIError) -> String {
        guard text.contains(",") else { return try validate(text, flag: flag, binding: false) }
        let entries = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        for (position, entry) in entries.enumerated() {
            let which = "--\(flag) '\(text)': entry \(position + 1) of \(entries.count)"
            guard !entry.isEmpty else { throw .usage("\(which) is empty (separate endpoints with single commas, e.g. tcp://127.0.0.1:7001,tcp://127.0.0.1:8001)") }
            do {
                _ = try validate(entry, flag: flag, binding: false)
            } catch {
                // validate's message starts with "--FLAG 'ENTRY': "; say which entry of the list it was.
                let message = error.description.replacingOccurrences(of: "--\(flag) '\(entry)': ", with: "")
                throw .usage("\(which), '\(entry)': \(message)")
            }
        }
        return text
    }

    /// How many endpoints a list validated by ``validateList(_:flag:)`` holds.
    static func count(_ list: String) -> Int {
        list.split(separator: ",", omittingEmptySubsequences: false).count
    }
}
