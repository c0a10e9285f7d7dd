import Foundation

/// Server-rendered SVG charts: no chart library and no script in the browser. Each series has its
/// own colour and line pattern (not colour alone), and the page puts the numbers in a table next
/// to the chart for screen readers and for reading exact values.
enum SVGChart {
    struct Series {
        let name: String
        let values: [Int]
    }

    static let colours = ["#1f5fa8", "#b23b00", "#2e7d32"]
    /// A generous width of one character of the charts' 12 px labels, for laying out room.
    static let characterWidth = 7.5
    static let dashes = ["", "6 3", "2 3"]

    /// A line chart of equally spaced points; `labels` name some of the points on the x axis.
    static func lines(title: String, series: [Series], labels: [(index: Int, text: String)], id: String) -> String {
        let width = 720.0, height = 240.0, left = 44.0, right = 12.0, top = 12.0, bottom = 36.0
        let count = series.map(\.values.count).max() ?? 0
        let maximum = niceMaximum(series.flatMap(\.values).max() ?? 0)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        func x(_ index: Int) -> Double { left + (count > 1 ? plotWidth * Double(index) / Double(count - 1) : plotWidth / 2) }
        func y(_ value: Int) -> Double { top + plotHeight * (1 - Double(value) / Double(maximum)) }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(width)) \(Int(height))" class="chart" role="img" aria-labelledby="\(id)-title">
            <title id="\(id)-title">\(escape(title))</title>
            """
        for step in 0...4 {
            let value = maximum * step / 4
            let lineY = y(value)
            svg += "<line x1=\"\(left)\" x2=\"\(width - right)\" y1=\"\(fmt(lineY))\" y2=\"\(fmt(lineY))\" class=\"grid\"/>"
            svg += "<text x=\"\(left - 6)\" y=\"\(fmt(lineY + 4))\" text-anchor=\"end\" class=\"axis\">\(value)</text>"
        }
        for label in labels {
            // The first and last labels hang inwards, so neither is cut at the picture's edge.
            let anchor = label.index == 0 ? "start" : label.index == count - 1 ? "end" : "middle"
            svg += "<text x=\"\(fmt(x(label.index)))\" y=\"\(fmt(height - bottom + 16))\" text-anchor=\"\(anchor)\" class=\"axis\">\(escape(label.text))</text>"
        }
        for (number, line) in series.enumerated() {
            let points = line.values.enumerated().map { "\(fmt(x($0.offset))),\(fmt(y($0.element)))" }.joined(separator: " ")
            let dash = dashes[number % dashes.count]
            svg += "<polyline fill=\"none\" stroke=\"\(colours[number % colours.count])\" stroke-width=\"2\"\(dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\"") points=\"\(points)\"/>"
        }
        // The legend, inside the picture so that a saved image still says what is what.
        var legendX = left
        for (number, line) in series.enumerated() {
            let dash = dashes[number % dashes.count]
            let legendY = height - 8
            svg += "<line x1=\"\(fmt(legendX))\" x2=\"\(fmt(legendX + 24))\" y1=\"\(fmt(legendY - 4))\" y2=\"\(fmt(legendY - 4))\" stroke=\"\(colours[number % colours.count])\" stroke-width=\"2\"\(dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\"")/>"
            svg += "<text x=\"\(fmt(legendX + 30))\" y=\"\(fmt(legendY))\" class=\"legend\">\(escape(line.name))</text>"
            legendX += 40 + Double(line.name.count) * characterWidth
        }
        return svg + "</svg>"
    }

    /// A grid of cells (rows x columns) shaded by value, each with its number.
    static func heatmap(title: String, rows: [String], columns: [String], values: [[Int]], id: String) -> String {
        // Room for the longest row name in full (names are not cut).
        let cellWidth = 44.0, cellHeight = 22.0, top = 24.0
        let left = 12 + Double(rows.map(\.count).max() ?? 0) * characterWidth
        let width = left + cellWidth * Double(columns.count) + 8, height = top + cellHeight * Double(max(rows.count, 1)) + 8
        let maximum = max(values.flatMap { $0 }.max() ?? 0, 1)
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(Int(width)) \(Int(height))" class="chart heatmap" role="img" aria-labelledby="\(id)-title">
            <title id="\(id)-title">\(escape(title))</title>
            """
        for (index, column) in columns.enumerated() {
            svg += "<text x=\"\(fmt(left + cellWidth * (Double(index) + 0.5)))\" y=\"16\" text-anchor=\"middle\" class=\"axis\">\(escape(column))</text>"
        }
        for (rowIndex, row) in rows.enumerated() {
            let rowY = top + cellHeight * Double(rowIndex)
            svg += "<text x=\"\(fmt(left - 6))\" y=\"\(fmt(rowY + 15))\" text-anchor=\"end\" class=\"axis\">\(escape(row))</text>"
            for (columnIndex, value) in values[rowIndex].enumerated() {
                let shade = value == 0 ? 0.0 : 0.15 + 0.85 * Double(value) / Double(maximum)
                let cellX = left + cellWidth * Double(columnIndex)
                svg += "<rect x=\"\(fmt(cellX))\" y=\"\(fmt(rowY))\" width=\"\(fmt(cellWidth - 2))\" height=\"\(fmt(cellHeight - 2))\" fill=\"#1f5fa8\" fill-opacity=\"\(fmt(shade))\" class=\"cell\"/>"
                svg += "<text x=\"\(fmt(cellX + cellWidth / 2 - 1))\" y=\"\(fmt(rowY + 15))\" text-anchor=\"middle\" class=\"\(shade > 0.55 ? "value light" : "value")\">\(value)</text>"
            }
        }
        return svg + "</svg>"
    }

    /// The top of the y axis: a round number at or above the largest value (at least 4).
    static func niceMaximum(_ value: Int) -> Int {
        guard value > 4 else { return 4 }
        var magnitude = 1
        while magnitude * 10 <= value { magnitude *= 10 }
        for factor in [1, 2, 4, 5, 10] where factor * magnitude >= value {
            let top = factor * magnitude
            return top % 4 == 0 ? top : ((top + 3) / 4) * 4
        }
        return value
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static func fmt(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
