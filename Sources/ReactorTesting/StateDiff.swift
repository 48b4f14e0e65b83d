/// A readable, line-based difference between an expected and an actual value.
///
/// Both values are rendered with the standard library's `dump` (one line per stored property
/// or element, nested by indentation) and compared line by line: lines only in the expected
/// rendering are marked `−`, lines only in the actual one `+`, and up to ``context`` unchanged
/// lines around each change are kept (marked with two spaces) so that the change can be placed;
/// longer unchanged runs are elided as `…`.
public enum StateDiff {
    /// Unchanged lines shown before and after each change.
    public static let context = 2

    /// Lines of the middle part (after the common head and tail) above which the diff does not
    /// search for a longest common subsequence and shows the part as removed then added.
    static let searchLimit = 2_000

    /// The difference between `expected` and `actual`, or `nil` when their renderings match.
    public static func lines<T>(expected: T, actual: T) -> String? {
        lines(expected: render(expected), actual: render(actual))
    }

    /// The `dump` rendering of a value, one element per line.
    public static func render<T>(_ value: T) -> [Substring] {
        var text = ""
        dump(value, to: &text)
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
    }

    /// The difference between two renderings, or `nil` when they are equal.
    static func lines(expected: [Substring], actual: [Substring]) -> String? {
        guard expected != actual else { return nil }
        let edits = self.edits(expected, actual)
        var output: [String] = []
        var index = 0
        while index < edits.count {
            guard case .same = edits[index] else {
                output.append(edits[index].rendered)
                index += 1
                continue
            }
            var end = index
            while end < edits.count, case .same = edits[end] { end += 1 }
            let run = end - index
            let before = index == 0 ? 0 : context        // context after the previous change
            let after = end == edits.count ? 0 : context  // context before the next change
            if run > before + after {
                output += edits[index..<(index + before)].map(\.rendered)
                output.append("  …")
                output += edits[(end - after)..<end].map(\.rendered)
            } else {
                output += edits[index..<end].map(\.rendered)
            }
            index = end
        }
        return output.joined(separator: "\n")
    }

    enum Edit {
        case same(Substring)
        case removed(Substring)
        case added(Substring)

        var rendered: String {
            switch self {
            case .same(let line): "  " + line
            case .removed(let line): "\u{2212} " + line
            case .added(let line): "+ " + line
            }
        }
    }

    /// A shortest edit script by longest common subsequence, after trimming the common head
    /// and tail (a state change usually touches a few lines of a long rendering).
    static func edits(_ old: [Substring], _ new: [Substring]) -> [Edit] {
        var head = 0
        while head < old.count, head < new.count, old[head] == new[head] { head += 1 }
        var tail = 0
        while tail < old.count - head, tail < new.count - head, old[old.count - 1 - tail] == new[new.count - 1 - tail] { tail += 1 }
        let a = Array(old[head..<(old.count - tail)])
        let b = Array(new[head..<(new.count - tail)])
        var middle: [Edit] = []
        if a.isEmpty || b.isEmpty || a.count > searchLimit || b.count > searchLimit {
            middle = a.map(Edit.removed) + b.map(Edit.added)
        } else {
            // lengths[i][j]: the LCS length of a[i...] and b[j...].
            var lengths = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
            for i in stride(from: a.count - 1, through: 0, by: -1) {
                for j in stride(from: b.count - 1, through: 0, by: -1) {
                    lengths[i][j] = a[i] == b[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
                }
            }
            var i = 0
            var j = 0
            while i < a.count || j < b.count {
                if i < a.count, j < b.count, a[i] == b[j] {
                    middle.append(.same(a[i]))
                    i += 1
                    j += 1
                } else if j == b.count || (i < a.count && lengths[i + 1][j] >= lengths[i][j + 1]) {
                    middle.append(.removed(a[i]))
                    i += 1
                } else {
                    middle.append(.added(b[j]))
                    j += 1
                }
            }
        }
        return old[..<head].map(Edit.same) + middle + old[(old.count - tail)...].map(Edit.same)
    }
}
