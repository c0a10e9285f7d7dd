import FluentKit
import Foundation
import SQLKit
import Storage

/// Appends events to the hash-chained audit table.
public struct AuditLog: Sendable {
    public init() {}

    /// Appends `event` and returns its sequence number. Inside a caller's transaction the entry
    /// commits (or rolls back) together with the caller's other writes; otherwise it gets its own.
    @discardableResult
    public func append(_ event: AuditEvent, at now: Date = Date(), on db: any Database) async throws -> Int64 {
        if db.inTransaction {
            return try await appendLocked(event, at: now, on: db)
        }
        return try await db.transaction { try await appendLocked(event, at: now, on: $0) }
    }

    private func appendLocked(_ event: AuditEvent, at now: Date, on db: any Database) async throws -> Int64 {
        let head = try await lockHead(on: db)
        let entry = AuditEntry()
        entry.id = head.seq + 1
        entry.occurredAt = AuditChain.truncatedToMilliseconds(now)
        entry.actor = event.actor
        entry.role = event.role
        entry.action = event.action.rawValue
        entry.outcome = event.outcome.rawValue
        entry.address = event.address
        entry.requestID = event.requestID
        entry.subject = event.subject
        entry.details = AuditChain.encodeDetails(event.details)
        entry.previousHash = head.hash
        entry.hash = AuditChain.hash(of: entry, previous: head.hash)
        // Plain SQL rather than `entry.create(on:)`: Fluent's model reflection was a visible cost.
        let insert: SQLQueryString = """
            INSERT INTO audit_log (seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash)
            VALUES (\(bind: entry.id!), \(bind: entry.occurredAt), \(bind: entry.actor), \(bind: entry.role), \(bind: entry.action),
                    \(bind: entry.outcome), \(bind: entry.address), \(bind: entry.requestID), \(bind: entry.subject),
                    \(bind: entry.details), \(bind: entry.previousHash), \(bind: entry.hash))
            """
        let moveHead: SQLQueryString = "UPDATE audit_head SET seq = \(bind: entry.id!), hash = \(bind: entry.hash) WHERE id = 1"
        if sql(db).dialect.name == "postgresql" {
            // One round trip less while the head row is locked.
            try await sql(db).raw("WITH entry AS (\(insert)) \(moveHead)").run()
        } else {
            try await sql(db).raw(insert).run()
            try await sql(db).raw(moveHead).run()
        }
        return entry.id!
    }

    /// Reads the head row; on PostgreSQL `FOR UPDATE` holds it until the transaction ends, so
    /// concurrent appends from several instances queue here. (SQLite runs one transaction at a
    /// time on its single connection.)
    private func lockHead(on db: any Database) async throws -> (seq: Int64, hash: String) {
        struct Row: Decodable { let seq: Int64; let hash: String }
        let lock = sql(db).dialect.name == "postgresql" ? " FOR UPDATE" : ""
        guard let row = try await sql(db).raw("SELECT seq, hash FROM audit_head WHERE id = 1\(unsafeRaw: lock)")
            .first(decoding: Row.self)
        else {
            throw AuditError.headMissing
        }
        return (row.seq, row.hash)
    }
}

public enum AuditError: Error, CustomStringConvertible {
    case headMissing
    public var description: String { "audit_head row is missing: run `portal migrate`" }
}
