import Foundation

/// A horizontal bar chart as inline SVG: one row per bar, its label on the left, its value
/// printed after the bar. Pure text, no scripts, so a report opens anywhere without a network.
struct SVGBarChart {
    struct Bar {
        var label: String
        var value: Double
        /// What is printed after the bar (the value with its unit, a verdict ...).
        var note: String
        var color: String
    }

    var title: String
    var bars: [Bar]
    /// Bar length: linear from 0, or logarithmic (base 2) centred on `reference`.
    var logarithmic = false
    /// A vertical line (e.g. the target, or the baseline's value) with its label.
    var reference: (value: Double, label: String)?

    private static let labelWidth = 330.0
    private static let barArea = 420.0
    private static let noteWidth = 250.0
    private static let rowHeight = 24.0

    /// The chart as an `<svg>` element.
    var svg: String {
        let width = Self.labelWidth + Self.barArea + Self.noteWidth
        let height = 34 + Double(bars.count) * Self.rowHeight + 18
        var parts = [#"<svg xmlns="http://www.w3.org/2000/svg" role="img" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))">"#,
                     #"<title>\#(Self.escape(title))</title>"#,
                     #"<text x="0" y="18" class="chart-title">\#(Self.escape(title))</text>"#]
        for (index, bar) in bars.enumerated() {
            let y = 34 + Double(index) * Self.rowHeight
            let length = max(1, position(bar.value))
            parts.append(#"<text x="\#(Int(Self.labelWidth - 8))" y="\#(Int(y + 15))" text-anchor="end">\#(Self.escape(bar.label))</text>"#)
            parts.append(#"<rect class="bar" x="\#(Int(Self.labelWidth))" y="\#(Int(y + 3))" width="\#(String(format: "%.1f", length))" height="\#(Int(Self.rowHeight - 7))" fill="\#(bar.color)"/>"#)
            parts.append(#"<text x="\#(Int(Self.labelWidth + length + 6))" y="\#(Int(y + 15))">\#(Self.escape(bar.note))</text>"#)
        }
        if let reference {
            let x = Self.labelWidth + position(reference.value)
            parts.append(#"<line class="reference" x1="\#(String(format: "%.1f", x))" y1="26" x2="\#(String(format: "%.1f", x))" y2="\#(Int(height - 14))" stroke="black" stroke-dasharray="4 3"/>"#)
            parts.append(#"<text x="\#(String(format: "%.1f", x + 4))" y="\#(Int(height - 2))" class="reference-label">\#(Self.escape(reference.label))</text>"#)
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    /// Where `value` falls on the bar area, in pixels from its left edge.
    private func position(_ value: Double) -> Double {
        guard value.isFinite, value > 0 else { return 0 }
        if logarithmic {
            // 1/64 ... 64 of the reference across the area, the reference in the middle.
            let centre = reference?.value ?? 1
            let octaves = log2(value / centre)
            return Self.barArea / 2 + min(max(octaves, -6), 6) / 6 * (Self.barArea / 2)
        }
        let largest = max(bars.map(\.value).max() ?? 1, reference?.value ?? 0)
        return largest > 0 ? value / largest * Self.barArea : 0
    }

    /// Text safe inside an SVG or HTML element.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
