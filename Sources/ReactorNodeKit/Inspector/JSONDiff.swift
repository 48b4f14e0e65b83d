import MessagePack

/// The differences between two JSON-like values (states as the app's `Codable` forms): each
/// changed leaf with its path, the value before and after (`nil`: absent on that side).
enum JSONDiff {
    struct Change: Equatable {
        var path: String
        var before: MessagePackValue?
        var after: MessagePackValue?
    }

    /// Every change from `before` to `after`, in path order; maps compare key by key, arrays
    /// index by index, anything else as a whole.
    static func changes(from before: MessagePackValue, to after: MessagePackValue) -> [Change] {
        var changes: [Change] = []
        walk(before, after, path: "", into: &changes)
        return changes
    }

    private static func walk(_ before: MessagePackValue?, _ after: MessagePackValue?, path: String, into changes: inout [Change]) {
        switch (before, after) {
        case (.map(let old)?, .map(let new)?):
            var keys: [String] = []
            var oldByKey: [String: MessagePackValue] = [:]
            var newByKey: [String: MessagePackValue] = [:]
            for entry in old { let key = name(entry.key); if oldByKey[key] == nil { keys.append(key) }; oldByKey[key] = entry.value }
            for entry in new { let key = name(entry.key); if oldByKey[key] == nil && newByKey[key] == nil { keys.append(key) }; newByKey[key] = entry.value }
            for key in keys.sorted() { walk(oldByKey[key], newByKey[key], path: path.isEmpty ? key : path + "." + key, into: &changes) }
        case (.array(let old)?, .array(let new)?):
            for index in 0..<max(old.count, new.count) {
                walk(index < old.count ? old[index] : nil, index < new.count ? new[index] : nil, path: path + "[\(index)]", into: &changes)
            }
        default:
            if before != after { changes.append(Change(path: path.isEmpty ? "(state)" : path, before: before, after: after)) }
        }
    }

    private static func name(_ key: MessagePackValue) -> String { key.jsonKeyName() }
}
