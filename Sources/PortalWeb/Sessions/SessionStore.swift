import AccessControl
import FluentKit
import Foundation
import Storage
import TeleTAN

/// Creates, finds, refreshes and ends sessions in the database, so any instance behind a load
/// balancer can serve any request.
package struct SessionStore: Sendable {
    package enum Lookup {
        case active(SessionRecord)
        case expired(SessionRecord)
        case unknown
    }

    let hasher: KeyedHasher
    package let idleTimeout: Duration
    package let lifetime: Duration

    /// A new session with a new random id (never one the browser brought along).
    package func create(
        username: String, roles: Set<Role>, address: String? = nil, now: Date, on db: any Database
    ) async throws -> (cookieValue: String, record: SessionRecord) {
        let rawID = RandomToken.make()
        let record = SessionRecord(idHash: hasher.hash(rawID, for: .session), username: username, roles: roles, address: address, now: now)
        try await record.create(on: db)
        return (rawID, record)
    }

    package func lookup(cookieValue: String, now: Date, on db: any Database) async throws -> Lookup {
        guard RandomToken.isWellFormed(cookieValue) else { return .unknown }
        // Plain SQL on every request: Fluent's model decoding (reflection) was a visible cost.
        struct Row: Decodable { let id_hash: String; let username: String; let roles: String; let created_at: Date; let last_seen_at: Date }
        guard let row = try await sql(db).raw("""
            SELECT id_hash, username, roles, created_at, last_seen_at FROM sessions
            WHERE id_hash IN (\(binds: hasher.hashes(cookieValue, for: .session)))
            """).first(decoding: Row.self)
        else {
            return .unknown
        }
        let record = SessionRecord(idHash: row.id_hash, username: row.username, roles: row.roles, createdAt: row.created_at, lastSeenAt: row.last_seen_at)
        return isExpired(record, now: now) ? .expired(record) : .active(record)
    }

    package func isExpired(_ record: SessionRecord, now: Date) -> Bool {
        now.timeIntervalSince(record.lastSeenAt) > idleTimeout.seconds
            || now.timeIntervalSince(record.createdAt) > lifetime.seconds
    }

    /// Moves the idle deadline. Written at most once a minute per session to spare the database.
    package func touch(_ record: SessionRecord, address: String? = nil, now: Date, on db: any Database) async throws {
        guard now.timeIntervalSince(record.lastSeenAt) > 60 else { return }
        try await sql(db).raw("""
            UPDATE sessions SET last_seen_at = \(bind: now), address = COALESCE(\(bind: address), address) WHERE id_hash = \(bind: record.id!)
            """).run()
    }

    /// Ends a session. Returns false if another request (or the cleanup) had already ended it, so
    /// that an ending is audited once.
    ///
    /// Its used form nonces stay until they are too old to be accepted anyway (the cleanup's age
    /// purge): a row there is the only record that a nonce was used, and a replay already past the
    /// session check could otherwise use it again. A teleTAN waiting for it can no longer be shown
    /// (it is sealed to the session) and stays until the issuance feature's purge audits it.
    @discardableResult
    package func end(sessionHash: String, on db: any Database) async throws -> Bool {
        struct Row: Decodable { let id_hash: String }
        let deleted = try await sql(db).raw("DELETE FROM sessions WHERE id_hash = \(bind: sessionHash) RETURNING id_hash")
            .all(decoding: Row.self)
        return !deleted.isEmpty
    }

    /// Ends a session on an admin's word, and remembers that it was so (``wasEndedByAdmin``).
    package func endByAdmin(sessionHash: String, now: Date, on db: any Database) async throws -> Bool {
        guard try await end(sessionHash: sessionHash, on: db) else { return false }
        try await sql(db).raw("INSERT INTO ended_sessions (id_hash, ended_at) VALUES (\(bind: sessionHash), \(bind: now))").run()
        return true
    }

    /// Whether an admin ended the session this cookie named (asked only for a cookie whose
    /// session is gone).
    package func wasEndedByAdmin(cookieValue: String, on db: any Database) async throws -> Bool {
        guard RandomToken.isWellFormed(cookieValue) else { return false }
        struct Row: Decodable { let id_hash: String }
        return try await sql(db).raw("""
            SELECT id_hash FROM ended_sessions WHERE id_hash IN (\(binds: hasher.hashes(cookieValue, for: .session)))
            """).first(decoding: Row.self) != nil
    }

    /// Deletes every expired session and returns whose they were (for the audit trail). Each row
    /// is returned by exactly one DELETE, so concurrent instances never audit one twice.
    package func removeExpired(now: Date, on db: any Database) async throws -> [(sessionHash: String, username: String)] {
        struct Row: Decodable { let id_hash: String; let username: String }
        let idleCutoff = now.addingTimeInterval(-idleTimeout.seconds)
        let lifetimeCutoff = now.addingTimeInterval(-lifetime.seconds)
        let rows = try await sql(db).raw("""
            DELETE FROM sessions WHERE last_seen_at < \(bind: idleCutoff) OR created_at < \(bind: lifetimeCutoff)
            RETURNING id_hash, username
            """).all(decoding: Row.self)
        // What admins ended is remembered as long as such a cookie could have been used.
        try await sql(db).raw("DELETE FROM ended_sessions WHERE ended_at < \(bind: lifetimeCutoff)").run()
        // Used form nonces stay until the age purge (see end(sessionHash:on:)); a teleTAN that
        // waited for the session stays until its display time is over, when the issuance feature
        // deletes it and audits it as never shown.
        return rows.map { ($0.id_hash, $0.username) }
    }
}

