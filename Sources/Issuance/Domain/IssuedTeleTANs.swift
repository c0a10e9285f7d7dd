import FluentKit
import Foundation
import SQLKit
import Storage

/// What each user issued, for "My recent teleTANs": the keyed fingerprint (as in the audit
/// trail), the verification service's reference (to ask for the status or revoke), type and
/// times. Never the teleTAN itself. Kept a little longer than the page shows.
package struct IssuedTeleTANs: Sendable {
    package struct Row: Decodable, Sendable {
        package let id: UUID
        package let issued_by: String
        package let fingerprint: String
        package let type: String
        package let reference: String?
        package let issued_at: Date
        package let valid_until: Date
        package let health_authority: String?
        package let revoked_at: Date?
        /// The hotline call it was issued in (a UUID's text), nil for other teleTANs.
        package let call_id: String?
        /// Why its issuer revoked it: one of ``RevocationReason``'s codes, and their optional note.
        package let revoke_reason: String?
        package let revoke_note: String?
    }

    /// How far back the page lists.
    package static let listed: TimeInterval = 7 * 24 * 60 * 60
    /// Rows are deleted a day after they leave the list.
    static let kept: TimeInterval = 8 * 24 * 60 * 60

    package init() {}

    func record(
        id: UUID, issuedBy: String, fingerprint: String, type: String, reference: String?, issuedAt: Date, validUntil: Date,
        healthAuthority: String?, callID: String?, on db: any Database
    ) async throws {
        try await sql(db).raw("""
            INSERT INTO issued_teletans (id, issued_by, fingerprint, type, reference, issued_at, valid_until, health_authority, revoked_at,
                                         call_id, revoke_reason, revoke_note)
            VALUES (\(bind: id), \(bind: issuedBy), \(bind: fingerprint), \(bind: type), \(bind: reference), \(bind: issuedAt),
                    \(bind: validUntil), \(bind: healthAuthority), NULL, \(bind: callID), NULL, NULL)
            """).run()
    }

    /// `user`'s teleTANs of the last seven days, newest first.
    package func recent(issuedBy user: String, now: Date, on db: any Database) async throws -> [Row] {
        try await sql(db).raw("""
            SELECT id, issued_by, fingerprint, type, reference, issued_at, valid_until, health_authority, revoked_at,
                   call_id, revoke_reason, revoke_note
            FROM issued_teletans WHERE issued_by = \(bind: user) AND issued_at > \(bind: now.addingTimeInterval(-Self.listed))
            ORDER BY issued_at DESC LIMIT 200
            """).all(decoding: Row.self)
    }

    /// One of `user`'s rows, nil for another user's or an unknown id.
    package func find(_ id: UUID, issuedBy user: String, on db: any Database) async throws -> Row? {
        try await sql(db).raw("""
            SELECT id, issued_by, fingerprint, type, reference, issued_at, valid_until, health_authority, revoked_at,
                   call_id, revoke_reason, revoke_note
            FROM issued_teletans WHERE id = \(bind: id) AND issued_by = \(bind: user)
            """).first(decoding: Row.self)
    }

    /// The row of a teleTAN by its fingerprint (the hotline's read-back and revoke).
    package func find(fingerprint: String, on db: any Database) async throws -> Row? {
        try await sql(db).raw("""
            SELECT id, issued_by, fingerprint, type, reference, issued_at, valid_until, health_authority, revoked_at,
                   call_id, revoke_reason, revoke_note
            FROM issued_teletans WHERE fingerprint = \(bind: fingerprint)
            """).first(decoding: Row.self)
    }

    func markRevoked(_ id: UUID, at time: Date, reason: RevocationReason?, on db: any Database) async throws {
        try await sql(db).raw("""
            UPDATE issued_teletans SET revoked_at = \(bind: time), revoke_reason = \(bind: reason?.code.rawValue),
                revoke_note = \(bind: reason?.note)
            WHERE id = \(bind: id) AND revoked_at IS NULL
            """).run()
    }

    /// A short name for the teleTAN that says nothing about it: the first eight characters of
    /// its random row id. The result page shows it beside the teleTAN (for the call sheet), and
    /// "My recent teleTANs" on its row.
    package static func reference(_ id: UUID) -> String {
        let text = id.uuidString.uppercased()
        return "\(text.prefix(4))-\(text.dropFirst(4).prefix(4))"
    }

    func purge(now: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM issued_teletans WHERE issued_at < \(bind: now.addingTimeInterval(-Self.kept))").run()
    }
}
