import FluentKit
import SQLKit

/// Migration 002 of this module: how many attempts each lock refused. A sign-in storm against a
/// locked name or address then costs one counter update per attempt instead of one audit entry;
/// the audit trail gets the first refusal and one entry with the count when the lock ends.
package struct AddLockoutRefusals: AsyncMigration {
    package init() {}

    package var name: String { "Storage.AddLockoutRefusals" }

    package func prepare(on database: any Database) async throws {
        try await sql(database).raw("ALTER TABLE lockouts ADD COLUMN refused INTEGER NOT NULL DEFAULT 0").run()
    }

    package func revert(on database: any Database) async throws {
        try await sql(database).raw("ALTER TABLE lockouts DROP COLUMN refused").run()
    }
}
