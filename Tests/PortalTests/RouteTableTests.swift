import Foundation
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb

/// docs/architecture.md's route table is generated from the access declarations: this test
/// builds the routes, writes the table and compares it with the one between the markers in the
/// document. When a route changes, the failure message holds the table to paste.
final class RouteTableTests: XCTestCase {
    static let begin = "<!-- route table: generated from the access declarations, checked by RouteTableTests -->"
    static let end = "<!-- end of route table -->"

    func testTheDocumentedRouteTableIsTheDeclaredOne() async throws {
        try await PortalHarness.run { portal in
            let (_, routes) = portal.portal.makeRoutes()
            let generated = Self.table(routes.declarations)
            let documented = try Self.documentedTable()
            XCTAssertEqual(documented, generated, """
                docs/architecture.md's route table differs from the declarations; replace the lines \
                between its markers with:
                \(generated)
                """)
        }
    }

    /// The check itself: a route the document does not list makes the tables differ.
    func testAnUndocumentedRouteIsFound() async throws {
        try await PortalHarness.run { portal in
            let (_, routes) = portal.portal.makeRoutes()
            routes.group("/extra", access: .signedIn).get { _, _ in "" }
            XCTAssertNotEqual(try Self.documentedTable(), Self.table(routes.declarations))
            XCTAssertTrue(Self.table(routes.declarations).contains("| GET | `/extra` | signed in |"))
        }
    }

    /// One row per method and path, sorted by path then method; access as the declaration
    /// describes itself (`public`, `signed in`, or the permission's name).
    static func table(_ declarations: [RouteDeclaration]) -> String {
        let rows = declarations
            .sorted { ($0.path, $0.method.rawValue) < ($1.path, $1.method.rawValue) }
            .map { "| \($0.method.rawValue) | `\($0.path)` | \($0.access) |" }
        return (["| method | path | access |", "|---|---|---|"] + rows).joined(separator: "\n")
    }

    static func documentedTable() throws -> String {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/architecture.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else {
            XCTFail("docs/architecture.md has no route table markers")
            return ""
        }
        return text[start.upperBound..<stop.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
