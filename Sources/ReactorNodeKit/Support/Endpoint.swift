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
