import Crypto
import FluentKit
import Foundation
import Storage
import TeleTAN

/// A teleTAN between the POST that created it and the one page view that shows it.
///
/// It is sealed with AES-GCM under a key derived from the server secret (never stored in
/// plaintext) and deleted by the page view that reads it: a reload, the back button or a second
/// tab finds nothing.
package struct PendingDisplays: Sendable {
    package struct Content: Codable, Sendable {
        package let teleTAN: String
        package let type: String
        package let validUntil: Date
        package let issuedAt: Date
    }

    private let key: SymmetricKey

    package init(serverSecret: SymmetricKey) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: serverSecret, info: Data("pending-display".utf8), outputByteCount: 32)
    }

    package func store(_ content: Content, sessionHash: String, now: Date, on db: any Database) async throws {
        let sealed = try AES.GCM.seal(JSONEncoder().encode(content), using: key, authenticating: Data(sessionHash.utf8))
        guard let combined = sealed.combined else { throw CryptoKitError.incorrectParameterSize }
        // One waiting teleTAN per session: a newer one replaces an unread older one.
        try await sql(db).raw("""
            INSERT INTO pending_displays (session_hash, sealed, created_at)
            VALUES (\(bind: sessionHash), \(bind: combined.base64EncodedString()), \(bind: now))
            ON CONFLICT (session_hash) DO UPDATE SET sealed = excluded.sealed, created_at = excluded.created_at
            """).run()
    }

    /// Returns the waiting teleTAN and deletes it, or nil if there is none (already shown).
    package func take(sessionHash: String, on db: any Database) async throws -> (content: Content, storedAt: Date)? {
        struct Row: Decodable { let sealed: String; let created_at: Date }
        guard let row = try await sql(db).raw("""
            DELETE FROM pending_displays WHERE session_hash = \(bind: sessionHash) RETURNING sealed, created_at
            """).first(decoding: Row.self),
            let data = Data(base64Encoded: row.sealed)
        else { return nil }
        let box = try AES.GCM.SealedBox(combined: data)
        let plain = try AES.GCM.open(box, using: key, authenticating: Data(sessionHash.utf8))
        return (try JSONDecoder().decode(Content.self, from: plain), row.created_at)
    }

    package func purge(olderThan cutoff: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM pending_displays WHERE created_at < \(bind: cutoff)").run()
    }
}
