import FluentKit
import Foundation

/// One row of the append-only audit table. `seq` is gap-free and `hash` chains each row to the
/// one before it, so a changed, removed or inserted row is found by ``AuditChainVerifier``.
/// Indexed for the admin review that filters by time, actor, action and outcome.
package final class AuditEntry: Model, @unchecked Sendable {
    package static let schema = "audit_log"

    @ID(custom: "seq", generatedBy: .user) package var id: Int64?
    @Field(key: "occurred_at") package var occurredAt: Date
    @OptionalField(key: "actor") package var actor: String?
    @OptionalField(key: "role") package var role: String?
    @Field(key: "action") package var action: String
    @Field(key: "outcome") package var outcome: String
    @OptionalField(key: "address") package var address: String?
    @OptionalField(key: "request_id") package var requestID: String?
    @OptionalField(key: "subject") package var subject: String?
    @Field(key: "details") package var details: String
    @Field(key: "prev_hash") package var previousHash: String
    @Field(key: "hash") package var hash: String

    package init() {}

    /// The decoded `details` column.
    package var detailValues: [String: String] {
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
