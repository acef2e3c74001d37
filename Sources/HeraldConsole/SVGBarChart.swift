/// A bar chart of one figure per period (a day, an hour) as SVG, drawn on the server: a bar
/// a period with its value in a tooltip, the largest value on the axis, and the first and
/// last period below.
struct SVGBarChart {
    let title: String
    let periods: [String]
    let values: [Int]
    var color = "#2f6fde"

    static let width = 280.0
    static let height = 120.0

    var svg: String {
        let top = max(values.max() ?? 0, 1)
        let plot = (x: 34.0, y: 18.0, width: Self.width - 40, height: Self.height - 40)
        let slot = plot.width / Double(max(values.count, 1))
        var parts = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"\(Int(Self.width))\" height=\"\(Int(Self.height))\" "
                + "viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" aria-label=\"\(escaped(title))\">",
            "<text x=\"0\" y=\"12\" font-size=\"12\" font-weight=\"600\">\(escaped(title))</text>",
            "<text x=\"\(plot.x - 4)\" y=\"\(plot.y + 9)\" font-size=\"10\" text-anchor=\"end\">\(top)</text>",
            "<text x=\"\(plot.x - 4)\" y=\"\(plot.y + plot.height)\" font-size=\"10\" text-anchor=\"end\">0</text>",
            "<line x1=\"\(plot.x)\" y1=\"\(plot.y + plot.height)\" x2=\"\(plot.x + plot.width)\" "
                + "y2=\"\(plot.y + plot.height)\" stroke=\"#8a93a3\"/>",
        ]
        for (index, value) in values.enumerated() {
            let barHeight = plot.height * Double(value) / Double(top)
            let x = plot.x + Double(index) * slot + slot * 0.15
            parts.append(
                "<rect x=\"\(rounded(x))\" y=\"\(rounded(plot.y + plot.height - barHeight))\" width=\"\(rounded(slot * 0.7))\" "
                    + "height=\"\(rounded(barHeight))\" fill=\"\(color)\"><title>\(periods[index]): \(value)</title></rect>"
            )
        }
        if let first = periods.first, let last = periods.last {
            parts.append("<text x=\"\(plot.x)\" y=\"\(Self.height - 6)\" font-size=\"10\">\(escaped(first))</text>")
            parts.append(
                "<text x=\"\(plot.x + plot.width)\" y=\"\(Self.height - 6)\" font-size=\"10\" text-anchor=\"end\">"
                    + "\(escaped(last))</text>")
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    private func rounded(_ value: Double) -> String { String((value * 10).rounded() / 10) }

    private func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
