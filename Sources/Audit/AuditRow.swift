import FluentKit
import Foundation
import SQLKit
import Storage

/// One audit entry as stored, read with plain SQL: what the chain check walks, the admin
/// pages show and the exports write.
package struct AuditRow: Sendable, Equatable {
    package let seq: Int64
    package let occurred_at: Date
    package let actor: String?
    package let role: String?
    package let action: String
    package let outcome: String
    package let address: String?
    package let request_id: String?
    package let subject: String?
    package let details: String
    package let prev_hash: String
    package let hash: String

    /// The decoded `details` column (decode once: each call parses the JSON).
    package var detailValues: [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: Data(details.utf8))) ?? [:]
    }

    package static let columns = "seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash"

    /// Reads the columns one by one: exports and the full check read millions of rows, and
    /// SQLKit's `Decodable` row decoder cost more than everything else they do per row.
    package init(_ row: any SQLRow) throws {
        seq = try row.decode(column: "seq", as: Int64.self)
        occurred_at = try row.decode(column: "occurred_at", as: Date.self)
        actor = try row.decode(column: "actor", as: String?.self)
        role = try row.decode(column: "role", as: String?.self)
        action = try row.decode(column: "action", as: String.self)
        outcome = try row.decode(column: "outcome", as: String.self)
        address = try row.decode(column: "address", as: String?.self)
        request_id = try row.decode(column: "request_id", as: String?.self)
        subject = try row.decode(column: "subject", as: String?.self)
        details = try row.decode(column: "details", as: String.self)
        prev_hash = try row.decode(column: "prev_hash", as: String.self)
        hash = try row.decode(column: "hash", as: String.self)
    }

    /// Whole milliseconds since 1970, as the chain hashes the time.
    package var milliseconds: Int64 { AuditChain.milliseconds(occurred_at) }

    /// The row as the chain's record: its JSON Lines line, its recomputed hash.
    package var exportRecord: AuditExportRecord {
        AuditExportRecord(
            seq: seq, atMilliseconds: milliseconds, actor: actor, role: role, action: action, outcome: outcome, address: address,
            requestID: request_id, subject: subject, details: details, previousHash: prev_hash, hash: hash)
    }

    /// Entries after `seq` up to `last`, in order, at most `limit`.
    static func page(after seq: Int64, through last: Int64, limit: Int, on db: any Database) async throws -> [AuditRow] {
        try await sql(db).raw("""
            SELECT \(unsafeRaw: columns) FROM audit_log WHERE seq > \(bind: seq) AND seq <= \(bind: last) ORDER BY seq LIMIT \(bind: limit)
            """).all().map { try AuditRow($0) }
    }

    static func find(_ seq: Int64, on db: any Database) async throws -> AuditRow? {
        try await page(after: seq - 1, through: seq, limit: 1, on: db).first
    }
}
