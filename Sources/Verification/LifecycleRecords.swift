import FluentKit
import Foundation

/// A registration token the app got for a redeemed teleTAN: only its keyed hash is stored.
package final class RegistrationTokenRecord: Model, @unchecked Sendable {
    package static let schema = "registration_tokens"

    @ID(key: .id) package var id: UUID?
    @Field(key: "hash") package var hash: String
    @Field(key: "teletan_type") package var teleTANType: String
    /// Session creation time; `/testresult` reports it as `sc`.
    @Field(key: "created_at") package var createdAt: Date
    /// One TAN per registration token.
    @Field(key: "tan_issued") package var tanIssued: Bool

    package init() {}

    init(hash: String, teleTANType: String, createdAt: Date) {
        self.id = UUID()
        self.hash = hash
        self.teleTANType = teleTANType
        self.createdAt = createdAt
        self.tanIssued = false
    }
}

/// A TAN for the submission server: keyed hash, validity (14 days), single use.
package final class TANRecord: Model, @unchecked Sendable {
    package static let schema = "tans"

    @ID(key: .id) package var id: UUID?
    @Field(key: "hash") package var hash: String
    @Field(key: "teletan_type") package var teleTANType: String
    @Field(key: "created_at") package var createdAt: Date
    @Field(key: "valid_until") package var validUntil: Date
    @OptionalField(key: "redeemed_at") package var redeemedAt: Date?

    package init() {}

    init(hash: String, teleTANType: String, createdAt: Date, validUntil: Date) {
        self.id = UUID()
        self.hash = hash
        self.teleTANType = teleTANType
        self.createdAt = createdAt
        self.validUntil = validUntil
    }
}
