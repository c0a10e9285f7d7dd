import FluentKit

/// Migration 003 of this module: a teleTAN's issuer can revoke it (read to the wrong person)
/// until the app redeems it.
package struct AddRevocation: AsyncMigration {
    package init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    package var name: String { "Verification.AddRevocation" }

    package func prepare(on database: any Database) async throws {
        try await database.schema(TeleTANRecord.schema)
            .field("revoked_at", .datetime)
            .update()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(TeleTANRecord.schema).deleteField("revoked_at").update()
    }
}
