import FluentKit
import Storage

/// Migration 001 of the issuance feature: what each user issued (keyed fingerprints and the
/// verification service's reference, never a teleTAN), for "My recent teleTANs" and revocation.
struct CreateIssuedTeleTANs: AsyncMigration {
    /// What databases record it under: fixed forever.
    var name: String { "Issuance.CreateIssuedTeleTANs" }

    func prepare(on database: any Database) async throws {
        try await database.schema("issued_teletans")
            .id()
            .field("issued_by", .string, .required)
            .field("fingerprint", .string, .required)
            .field("type", .string, .required)
            .field("reference", .string)
            .field("issued_at", .datetime, .required)
            .field("valid_until", .datetime, .required)
            .field("health_authority", .string)
            .field("revoked_at", .datetime)
            .create()
        try await sql(database).raw("CREATE INDEX issued_teletans_by_issuer ON issued_teletans (issued_by, issued_at)").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("issued_teletans").delete()
    }
}
