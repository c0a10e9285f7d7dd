import Audit
import Crypto
import FluentKit
import Foundation
import SQLKit
import Storage
import TeleTAN

/// A teleTAN between the POST that created it and the one page view that shows it.
///
/// It is sealed with AES-GCM under a key derived from the server secret (never stored in
/// plaintext) and deleted by the page view that reads it: a reload, the back button or a second
/// tab finds nothing. A session has at most one waiting; one that was never shown (the browser
/// did not follow the redirect, the officer signed out) is audited when its display time ends.
package struct PendingDisplays: Sendable {
    package struct Content: Codable, Sendable {
        package let teleTAN: String
        package let type: String
        package let validUntil: Date
        package let issuedAt: Date
        /// Who issued it; absent in rows sealed before it was recorded.
        package let issuedTo: String?
        /// The hotline call it was issued in, if any: the result page leads back to it.
        package var callID: String? = nil
        /// The requesting health authority's name, for an EVENT teleTAN.
        package var healthAuthority: String? = nil
        /// The short reference "My recent teleTANs" lists it under (absent in rows sealed before).
        package var reference: String? = nil
    }

    private let sealer: Sealer
    let hasher: KeyedHasher
    let audit: AuditLog
    /// How long after issuing a teleTAN may be shown.
    package let displayTime: Duration

    package init(hasher: KeyedHasher, audit: AuditLog, displayTime: Duration) {
        sealer = Sealer(keyring: hasher.keyring, purpose: "pending-display")
        self.hasher = hasher
        self.audit = audit
        self.displayTime = displayTime
    }

    /// Parks `content` for the session; false (nothing stored) when one is waiting already.
    func store(_ content: Content, sessionHash: String, now: Date, on db: any Database) async throws -> Bool {
        let sealed = try sealer.seal(content, boundTo: sessionHash)
        struct Row: Decodable { let session_hash: String }
        let stored = try await sql(db).raw("""
            INSERT INTO pending_displays (session_hash, sealed, created_at)
            VALUES (\(bind: sessionHash), \(bind: sealed), \(bind: now))
            ON CONFLICT (session_hash) DO NOTHING
            RETURNING session_hash
            """).all(decoding: Row.self)
        return !stored.isEmpty
    }

    /// Whether a teleTAN is waiting for the session and may still be shown (a read only: the
    /// start page asks on every view).
    package func isWaiting(sessionHash: String, now: Date, on db: any Database) async throws -> Bool {
        struct Row: Decodable { let created_at: Date }
        guard let row = try await sql(db).raw("""
            SELECT created_at FROM pending_displays WHERE session_hash = \(bind: sessionHash)
            """).first(decoding: Row.self)
        else { return false }
        return row.created_at > cutoff(now)
    }

    /// Like ``isWaiting(sessionHash:now:on:)``, for the issuing transaction: one whose display time
    /// is over is first deleted and audited as never shown, so that it cannot block the next
    /// issuance until the periodic purge comes by.
    func settleWaiting(sessionHash: String, now: Date, on tx: any Database) async throws -> Bool {
        try await purge("session_hash = \(bind: sessionHash) AND created_at <= \(bind: cutoff(now))", now: now, on: tx)
        return try await isWaiting(sessionHash: sessionHash, now: now, on: tx)
    }

    /// Returns the waiting teleTAN and deletes it, or nil if there is none (already shown) or its
    /// display time is over (then it is audited as never shown, in the same transaction).
    package func take(sessionHash: String, now: Date, on db: any Database) async throws -> (content: Content, storedAt: Date)? {
        struct Row: Decodable { let sealed: String; let created_at: Date }
        return try await db.transaction { tx in
            guard let row = try await sql(tx).raw("""
                DELETE FROM pending_displays WHERE session_hash = \(bind: sessionHash) RETURNING sealed, created_at
                """).first(decoding: Row.self)
            else { return nil }
            let content = open(row.sealed, sessionHash: sessionHash)
            guard let content, row.created_at > cutoff(now) else {
                try await auditUnshown(content, at: now, on: tx)
                return nil
            }
            return (content, row.created_at)
        }
    }

    /// Deletes every teleTAN whose display time is over, auditing each as never shown. Each row is
    /// returned by exactly one DELETE, so instances running this at once audit it once.
    package func purgeExpired(now: Date, on db: any Database) async throws {
        try await db.transaction { tx in
            try await purge("created_at <= \(bind: cutoff(now))", now: now, on: tx)
        }
    }

    /// The latest creation time whose teleTAN may no longer be shown.
    private func cutoff(_ now: Date) -> Date {
        now.addingTimeInterval(-displayTime.seconds)
    }

    private func purge(_ condition: SQLQueryString, now: Date, on db: any Database) async throws {
        struct Row: Decodable { let session_hash: String; let sealed: String }
        let rows = try await sql(db).raw("DELETE FROM pending_displays WHERE \(condition) RETURNING session_hash, sealed")
            .all(decoding: Row.self)
        for row in rows {
            try await auditUnshown(open(row.sealed, sessionHash: row.session_hash), at: now, on: db)
        }
    }

    /// The sealed content, or nil when it cannot be opened (the secret file was replaced, or the
    /// row was changed): such a row is still deleted and audited, never left to block the cleanup.
    private func open(_ sealed: String, sessionHash: String) -> Content? {
        sealer.open(Content.self, from: sealed, boundTo: sessionHash)
    }

    private func auditUnshown(_ content: Content?, at time: Date, on db: any Database) async throws {
        guard let content else {
            try await audit.append(AuditEvent(
                action: .teleTANExpiredUnshown, outcome: .failure, details: ["reason": "unreadable"]), at: time, on: db)
            return
        }
        try await audit.append(AuditEvent(
            action: .teleTANExpiredUnshown, outcome: .failure, actor: content.issuedTo,
            subject: hasher.hash(content.teleTAN, for: .teleTANFingerprint),
            details: ["type": content.type, "issued_at": content.issuedAt.formatted(.iso8601)]), at: time, on: db)
    }
}
