import FluentKit
import Foundation

/// A registration token the app got for a redeemed teleTAN: only its keyed hash is stored.
public final class RegistrationTokenRecord: Model, @unchecked Sendable {
    public static let schema = "registration_tokens"

    @ID(key: .id) public var id: UUID?
    @Field(key: "hash") public var hash: String
    @Field(key: "teletan_type") public var teleTANType: String
    /// Session creation time; `/testresult` reports it as `sc`.
    @Field(key: "created_at") public var createdAt: Date
    /// One TAN per registration token.
    @Field(key: "tan_issued") public var tanIssued: Bool

    public init() {}

    init(hash: String, teleTANType: String, createdAt: Date) {
        self.id = UUID()
        self.hash = hash
        self.teleTANType = teleTANType
        self.createdAt = createdAt
        self.tanIssued = false
    }
}

/// A TAN for the submission server: keyed hash, validity (14 days), single use.
public final class TANRecord: Model, @unchecked Sendable {
    public static let schema = "tans"

    @ID(key: .id) public var id: UUID?
    @Field(key: "hash") public var hash: String
    @Field(key: "teletan_type") public var teleTANType: String
    @Field(key: "created_at") public var createdAt: Date
    @Field(key: "valid_until") public var validUntil: Date
    @OptionalField(key: "redeemed_at") public var redeemedAt: Date?

    public init() {}

    init(hash: String, teleTANType: String, createdAt: Date, validUntil: Date) {
        self.id = UUID()
        self.hash = hash
        self.teleTANType = teleTANType
        self.createdAt = createdAt
        self.validUntil = validUntil
    }
}
