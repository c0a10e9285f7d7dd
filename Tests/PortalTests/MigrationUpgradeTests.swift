import Audit
import FluentKit
import Foundation
import Storage
import TestSupport
import XCTest
@testable import Portal

/// A database made by the previous release (Tests/fixtures/previous-release, before the feature
/// split) opens with this release: every migration it recorded is recognised by name (none runs
/// again), and its audit chain still verifies, also after this release appends to it.
final class MigrationUpgradeTests: XCTestCase {
    static let fixtures = repositoryRoot.appendingPathComponent("Tests/fixtures/previous-release")

    func testPreviousReleaseDatabaseMigratesAndItsChainStillVerifies() async throws {
        try await TestDatabases.forEach { location in
            switch location {
            case .sqlite(let path):
                try Shell.run("/usr/bin/sqlite3", path, ".read '\(Self.fixtures.appendingPathComponent("sqlite.sql").path)'")
            case .postgres(let url):
                try Shell.run("/usr/bin/psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-o", "/dev/null",
                              "-f", Self.fixtures.appendingPathComponent("postgres.sql").path)
            }
            let database = try await PortalDatabase.openMigrated(
                location: location, migrations: PortalApp.migrations, logger: TestDatabases.testLogger)
            do {
                let db = database.database(logger: TestDatabases.testLogger)
                struct Row: Decodable { let name: String; let batch: Int }
                let recorded = try await sql(db).raw("SELECT name, batch FROM _fluent_migrations").all(decoding: Row.self)
                XCTAssertEqual(Set(recorded.map(\.name)), Set(PortalApp.migrations.map(\.name)), "\(location)")
                XCTAssertEqual(
                    Set(recorded.filter { $0.batch == 1 }.map(\.name)),
                    ["Storage.CreateRateLimitTables", "Audit.CreateAuditLog", "Verification.CreateTeleTANRecords", "Portal.CreatePortalTables"],
                    "the previous release's migrations are not run again")
                let before = try await AuditChainVerifier().verify(on: db)
                XCTAssertTrue(before.isIntact, "\(before)")
                XCTAssertEqual(before.checkedEntries, 6)

                try await AuditLog().append(
                    AuditEvent(action: .signIn, outcome: .success, actor: "tt-officer"), at: Date(), on: db)
                let after = try await AuditChainVerifier().verify(on: db)
                XCTAssertTrue(after.isIntact, "\(after)")
                XCTAssertEqual(after.checkedEntries, 7)
            } catch {
                await database.shutdown()
                throw error
            }
            await database.shutdown()
        }
    }
}
