import AccessControl
import Foundation
import XCTest

/// The role/permission tables in docs/ say what `Permission.granted` grants: every role's row
/// names exactly its permissions (by their raw names, in backticks).
final class DocsPermissionTableTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testEveryDocsPermissionTableMatchesTheGrantedTable() throws {
        for document in ["docs/architecture.md", "docs/security.md", "docs/configuration.md"] {
            let text = try String(contentsOf: Self.repository.appendingPathComponent(document), encoding: .utf8)
            let rows = Self.permissionRows(in: text)
            XCTAssertEqual(Set(rows.keys), Set(Role.allCases), "\(document): one row per role")
            for role in Role.allCases {
                XCTAssertEqual(rows[role], Permission.granted[role, default: []], "\(document): \(role.rawValue)")
            }
        }
    }

    func testTheParserSeesADifference() {
        let table = """
            | role | permissions |
            |---|---|
            | officer | `issue_test_teletan` |
            | hotline | `work_hotline_calls`, `see_own_teletans` (its own) |
            """
        let rows = Self.permissionRows(in: table)
        XCTAssertEqual(rows[.officer], [.issueTestTeleTAN])
        XCTAssertEqual(rows[.hotline], [.workHotlineCalls, .seeOwnTeleTANs])
        XCTAssertNotEqual(rows[.officer], Permission.granted[.officer], "officer lacks see_own_teletans here")
    }

    /// Table rows whose first cell is a role's name, with the permission names the row mentions
    /// in backticks (flags and other code in the row are not permission names and are skipped).
    static func permissionRows(in text: String) -> [Role: Set<Permission>] {
        var rows: [Role: Set<Permission>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("|") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first, let role = Role(rawValue: first) else { continue }
            let names = line.matches(of: /`([a-z_]+)`/).map { String($0.output.1) }
            rows[role, default: []].formUnion(names.compactMap(Permission.init(rawValue:)))
        }
        return rows
    }
}
