import Audit
import FluentKit
import Foundation
import SQLKit
import Storage
import TestSupport
import XCTest
@testable import Portal

/// The rollback of docs/deployment.md ("install the previous package; the database stays") works
/// because this release runs on a schema a later release has expanded: a later release's
/// migrations applied (a new table; new nullable and defaulted columns in the tables every request
/// touches, the audit trail's among them), this release still signs in, issues, keeps its audit
/// chain intact and ignores the migration it does not know.
final class RollbackTests: XCTestCase {
    /// What a next release may do under the expand-only rule (ExpandOnlyMigrationTests).
    private struct NextReleaseExpands: AsyncMigration {
        var name: String { "Next.ExpandsEverything" }
        func prepare(on database: any Database) async throws {
            try await database.schema("next_release_table").id().field("note", .string).create()
            for table in ["audit_log", "issued_teletans", "sessions", "pending_displays", "form_nonces"] {
                try await database.schema(table).field("next_release_note", .string).update()
                try await database.schema(table).field("next_release_flag", .bool, .required, .sql(.default(false))).update()
            }
        }
        func revert(on database: any Database) async throws {}
    }

    func testThisReleaseRunsOnASchemaTheNextReleaseExpanded() async throws {
        try await PortalHarness.run(prepareDatabase: { location in
            let database = try await PortalDatabase.openMigrated(
                location: location, migrations: PortalApp.migrations + [NextReleaseExpands()], logger: TestDatabases.testLogger)
            await database.shutdown()
        }) { portal in
            let officer = try await portal.signedIn(.officer)
            let teleTAN = try await officer.issueTeleTAN()
            XCTAssertNotNil(teleTAN)
            let issued = try await portal.count("SELECT COUNT(*) AS n FROM issued_teletans")
            XCTAssertEqual(issued, 1)
            let unknownMigration = try await portal.count("SELECT COUNT(*) AS n FROM _fluent_migrations WHERE name = 'Next.ExpandsEverything'")
            XCTAssertEqual(unknownMigration, 1)
            let verification = try await AuditChainVerifier().verify(on: portal.db)
            XCTAssertTrue(verification.isIntact, "\(verification)")
        }
    }
}
