import FluentKit
import Foundation

/// One row of the append-only audit table. `seq` is gap-free and `hash` chains each row to the
/// one before it, so a changed, removed or inserted row is found by ``AuditChainVerifier``.
/// Indexed for the admin review that filters by time, actor, action and outcome.
public final class AuditEntry: Model, @unchecked Sendable {
    public static let schema = "audit_log"

    @ID(custom: "seq", generatedBy: .user) public var id: Int64?
    @Field(key: "occurred_at") public var occurredAt: Date
    @OptionalField(key: "actor") public var actor: String?
    @OptionalField(key: "role") public var role: String?
    @Field(key: "action") public var action: String
    @Field(key: "outcome") public var outcome: String
    @OptionalField(key: "address") public var address: String?
    @OptionalField(key: "request_id") public var requestID: String?
    @OptionalField(key: "subject") public var subject: String?
    @Field(key: "details") public var details: String
    @Field(key: "prev_hash") public var previousHash: String
    @Field(key: "hash") public var hash: String

    public init() {}

    /// The decoded `details` column.
    public var detailValues: [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(details.utf8))) ?? [:]
    }
}

/// The chain's head: the last sequence number and hash. Appends lock this single row, which
/// serialises them across instances and makes a truncated tail detectable.
final class AuditHead: Model, @unchecked Sendable {
    static let schema = "audit_head"
    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "seq") var seq: Int64
    @Field(key: "hash") var hash: String

    init() {}
    init(seq: Int64, hash: String) {
        self.id = 1
        self.seq = seq
        self.hash = hash
    }
}
