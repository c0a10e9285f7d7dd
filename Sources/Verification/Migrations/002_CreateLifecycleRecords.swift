import FluentKit

/// Migration 002 of this module: registration tokens and TANs (the standalone verification
/// server's tables; keyed hashes only).
public struct CreateLifecycleRecords: AsyncMigration {
    public init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    public var name: String { "Verification.CreateLifecycleRecords" }

    public func prepare(on database: any Database) async throws {
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

    public func revert(on database: any Database) async throws {
        try await database.schema(TANRecord.schema).delete()
        try await database.schema(RegistrationTokenRecord.schema).delete()
    }
}
