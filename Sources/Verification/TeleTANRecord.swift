import FluentKit
import Foundation

/// A teleTAN as the verification side keeps it: only its keyed hash, type and validity.
public final class TeleTANRecord: Model, @unchecked Sendable {
    public static let schema = "teletans"

    @ID(key: .id) public var id: UUID?
    @Field(key: "hash") public var hash: String
    @Field(key: "type") public var type: String
    @Field(key: "created_at") public var createdAt: Date
    @Field(key: "valid_until") public var validUntil: Date
    @OptionalField(key: "redeemed_at") public var redeemedAt: Date?
    @Field(key: "requested_by") public var requestedBy: String

    public init() {}

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
    public static func purge(olderThan cutoff: Date, on db: any Database) async throws {
        try await TeleTANRecord.query(on: db).filter(\.$createdAt < cutoff).delete()
    }
}
