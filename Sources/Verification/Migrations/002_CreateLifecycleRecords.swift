import FluentKit

/// Migration 002 of this module: registration tokens and TANs (the standalone verification
/// server's tables; keyed hashes only).
package struct CreateLifecycleRecords: AsyncMigration {
    package init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    package var name: String { "Verification.CreateLifecycleRecords" }

    package func prepare(on database: any Database) async throws {
        try await database.schema(RegistrationTokenRecord.schema)
            .id()
            .field("hash", .string, .required)
            .field("teletan_type", .string, .required)
            .field("created_at", .datetime, .required)
            .field("tan_issued", .bool, .required)
            .unique(on: "hash")
            .create()
        try await database.schema(TANRecord.schema)
            .id()
            .field("hash", .string, .required)
            .field("teletan_type", .string, .required)
            .field("created_at", .datetime, .required)
            .field("valid_until", .datetime, .required)
            .field("redeemed_at", .datetime)
            .unique(on: "hash")
            .create()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema(TANRecord.schema).delete()
        try await database.schema(RegistrationTokenRecord.schema).delete()
    }
}
