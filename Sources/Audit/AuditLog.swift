import FluentKit
import Foundation
import SQLKit
import Storage

/// Appends events to the hash-chained audit table.
package struct AuditLog: Sendable {
    package init() {}

    /// Appends `event` and returns its sequence number. Inside a caller's transaction the entry
    /// commits (or rolls back) together with the caller's other writes; otherwise it gets its own.
    @discardableResult
    package func append(_ event: AuditEvent, at now: Date = Date(), on db: any Database) async throws -> Int64 {
        if db.inTransaction {
            return try await appendLocked(event, at: now, on: db)
        }
        return try await db.transaction { try await appendLocked(event, at: now, on: $0) }
    }

    private func appendLocked(_ event: AuditEvent, at now: Date, on db: any Database) async throws -> Int64 {
        let entry = AuditEntry()
        entry.occurredAt = AuditChain.truncatedToMilliseconds(now)
        entry.actor = event.actor.map(Self.storable)
        entry.role = event.role.map(Self.storable)
        entry.action = Self.storable(event.action.rawValue)
        entry.outcome = event.outcome.rawValue
        entry.address = event.address.map(Self.storable)
        entry.requestID = event.requestID.map(Self.storable)
        entry.subject = event.subject.map(Self.storable)
        entry.details = AuditChain.encodeDetails(event.details)
        if isPostgreSQL(db) {
            return try await appendInOneStatement(entry, parts: AuditChain.canonicalParts(of: entry), on: db)
        }
        let head = try await lockHead(on: db)
        entry.id = head.seq + 1
        entry.previousHash = head.hash
        entry.hash = AuditChain.hash(of: entry, previous: head.hash)
        // Plain SQL rather than `entry.create(on:)`: Fluent's model reflection was a visible cost.
        try await sql(db).raw("""
            INSERT INTO audit_log (seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash)
            VALUES (\(bind: entry.id!), \(bind: entry.occurredAt), \(bind: entry.actor), \(bind: entry.role), \(bind: entry.action),
                    \(bind: entry.outcome), \(bind: entry.address), \(bind: entry.requestID), \(bind: entry.subject),
                    \(bind: entry.details), \(bind: entry.previousHash), \(bind: entry.hash))
            """).run()
        try await sql(db).raw("UPDATE audit_head SET seq = \(bind: entry.id!), hash = \(bind: entry.hash) WHERE id = 1").run()
        return entry.id!
    }

    /// NUL as U+FFFD: PostgreSQL refuses NUL in text and SQLite reads it back cut short, so a
    /// typed username with NUL would fail the append or break the chain. (`details` is JSON, where
    /// NUL is already escaped.)
    static func storable(_ text: String) -> String {
        text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : text
    }

    /// PostgreSQL: lock the head, insert the entry chained to it and move the head, all in one
    /// statement, so the head stays locked only for that statement and the commit (issuances
    /// queue on this lock). The hash is the same SHA-256 ``AuditChain/hash(of:previous:)`` computes,
    /// over `prev_hash || "\n" || prefix || seq || suffix` (needs a UTF8 database, PostgreSQL's
    /// default); `portal audit verify` recomputes it in Swift.
    private func appendInOneStatement(_ entry: AuditEntry, parts: (prefix: String, suffix: String), on db: any Database) async throws -> Int64 {
        struct Row: Decodable { let seq: Int64 }
        guard let row = try await sql(db).raw("""
            WITH head AS (SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE),
            entry AS (
                INSERT INTO audit_log (seq, occurred_at, actor, role, action, outcome, address, request_id, subject, details, prev_hash, hash)
                SELECT head.seq + 1, \(bind: entry.occurredAt), \(bind: entry.actor), \(bind: entry.role), \(bind: entry.action),
                       \(bind: entry.outcome), \(bind: entry.address), \(bind: entry.requestID), \(bind: entry.subject),
                       \(bind: entry.details), head.hash,
                       encode(sha256(convert_to(head.hash || chr(10) || \(bind: parts.prefix) || (head.seq + 1)::text || \(bind: parts.suffix), 'UTF8')), 'hex')
                FROM head
                RETURNING seq, hash)
            UPDATE audit_head SET seq = entry.seq, hash = entry.hash FROM entry WHERE audit_head.id = 1
            RETURNING audit_head.seq
            """).first(decoding: Row.self)
        else { throw AuditError.headMissing }
        return row.seq
    }

    /// Reads the head row; on PostgreSQL `FOR UPDATE` holds it until the transaction ends, so
    /// concurrent appends from several instances queue here. (SQLite runs one transaction at a
    /// time on its single connection.)
    private func lockHead(on db: any Database) async throws -> (seq: Int64, hash: String) {
        struct Row: Decodable { let seq: Int64; let hash: String }
        let lock = isPostgreSQL(db) ? " FOR UPDATE" : ""
        guard let row = try await sql(db).raw("SELECT seq, hash FROM audit_head WHERE id = 1\(unsafeRaw: lock)")
            .first(decoding: Row.self)
        else {
            throw AuditError.headMissing
        }
        return (row.seq, row.hash)
    }
}

package enum AuditError: Error, CustomStringConvertible {
    case headMissing
    package var description: String { "audit_head row is missing: run `portal migrate`" }
}
