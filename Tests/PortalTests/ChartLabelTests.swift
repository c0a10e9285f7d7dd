import XCTest
@testable import AuditReview

/// Issue 18, item 12: chart labels legible and not cut.
final class ChartLabelTests: XCTestCase {
    func testTheOuterAxisLabelsHangInwards() {
        let svg = SVGChart.lines(
            title: "t", series: [.init(name: "issued", values: [1, 2, 3, 4])],
            labels: [(0, "24 Nov"), (2, "26 Nov"), (3, "27 Nov")], id: "c")
        XCTAssertTrue(svg.contains(#"text-anchor="start" class="axis">24 Nov<"#), svg)
        XCTAssertTrue(svg.contains(#"text-anchor="middle" class="axis">26 Nov<"#), svg)
        XCTAssertTrue(svg.contains(#"text-anchor="end" class="axis">27 Nov<"#), svg)
    }

    func testHeatmapRowNamesAreNotCutAndFitLeftOfTheCells() throws {
        let name = "hotline.callback.attempt.refused"
        let svg = SVGChart.heatmap(title: "t", rows: [name, "x"], columns: ["0", "1"], values: [[1, 2], [0, 3]], id: "h")
        XCTAssertTrue(svg.contains(">\(name)</text>"), "the whole name")
        // The name ends at `left - 6`, and `left` leaves room for every character.
        let firstCell = try XCTUnwrap(svg.firstMatch(of: /<rect x="([0-9.]+)"/)).output.1
        XCTAssertGreaterThanOrEqual(Double(firstCell)!, Double(name.count) * SVGChart.characterWidth)
    }
}
