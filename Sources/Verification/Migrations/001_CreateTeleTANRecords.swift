import FluentKit

/// Migration 001 of this module: teleTANs (keyed hashes only).
public struct CreateTeleTANRecords: AsyncMigration {
    public init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    public var name: String { "Verification.CreateTeleTANRecords" }

    public func prepare(on database: any Database) async throws {
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

    public func revert(on database: any Database) async throws {
        try await database.schema(TeleTANRecord.schema).delete()
    }
}
