import FluentKit

/// Migration 001 of this module: teleTANs (keyed hashes only).
package struct CreateTeleTANRecords: AsyncMigration {
    package init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    package var name: String { "Verification.CreateTeleTANRecords" }

    package func prepare(on database: any Database) async throws {
        try await database.schema(TeleTANRecord.schema)
            .id()
            .field("hash", .string, .required)
            .field("type", .string, .required)
            .field("created_at", .datetime, .required)
            .field("valid_until", .datetime, .required)
            .field("redeemed_at", .datetime)
            .field("requested_by", .string, .required)
            .unique(on: "hash")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(TeleTANRecord.schema).delete()
    }
}
