import Synchronization
import Testing

/// Runs `body`, which must record at least one issue, and returns the text of every issue it
/// recorded, in order. The issues are known issues, so they do not fail the calling test; a
/// body that records none fails it (`withKnownIssue` reports a missing known issue).
func recordedIssues(_ body: () async -> Void) async -> [String] {
    let texts = Mutex<[String]>([])
    await withKnownIssue {
        await body()
    } matching: { issue in
        texts.withLock { $0.append(issue.comments.map(\.rawValue).joined(separator: "\n")) }
        return true
    }
    return texts.withLock { $0 }
}
