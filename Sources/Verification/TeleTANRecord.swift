import FluentKit
import Foundation

/// A teleTAN as the verification side keeps it: only its keyed hash, type and validity.
package final class TeleTANRecord: Model, @unchecked Sendable {
    package static let schema = "teletans"

    @ID(key: .id) package var id: UUID?
    @Field(key: "hash") package var hash: String
    @Field(key: "type") package var type: String
    @Field(key: "created_at") package var createdAt: Date
    @Field(key: "valid_until") package var validUntil: Date
    @OptionalField(key: "redeemed_at") package var redeemedAt: Date?
    @Field(key: "requested_by") package var requestedBy: String
    /// Set when its issuer revoked it; a revoked teleTAN redeems like an unknown one.
    @OptionalField(key: "revoked_at") package var revokedAt: Date?

    package init() {}

    init(hash: String, type: String, createdAt: Date, validUntil: Date, requestedBy: String) {
        self.id = UUID()
        self.hash = hash
        self.type = type
        self.createdAt = createdAt
        self.validUntil = validUntil
        self.requestedBy = requestedBy
    }
}

extension TeleTANRecord {
    /// Retention: deletes rows created before `cutoff` (CWA keeps them 21 days).
    package static func purge(olderThan cutoff: Date, on db: any Database) async throws {
        try await TeleTANRecord.query(on: db).filter(\.$createdAt < cutoff).delete()
    }
}
