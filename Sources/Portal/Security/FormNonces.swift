import FluentKit
import Foundation
import Storage
import TeleTAN

/// One-use tokens for the issuing form: each rendered form may create one teleTAN, so a double
/// click or a replayed form cannot create a second. Stored as keyed hashes, bound to the session.
struct FormNonces: Sendable {
    let hasher: KeyedHasher

    func make(sessionHash: String, now: Date, on db: any Database) async throws -> String {
        let nonce = RandomToken.make()
        try await sql(db).raw("""
            INSERT INTO form_nonces (nonce_hash, session_hash, created_at)
            VALUES (\(bind: hasher.hash(nonce, for: .formNonce)), \(bind: sessionHash), \(bind: now))
            """).run()
        return nonce
    }

    /// True exactly once per nonce. On PostgreSQL a concurrent second submit waits for the first
    /// transaction's row lock and then finds nothing, so it cannot race past.
    func consume(_ nonce: String, sessionHash: String, on db: any Database) async throws -> Bool {
        guard RandomToken.isWellFormed(nonce) else { return false }
        struct Row: Decodable { let nonce_hash: String }
        let rows = try await sql(db).raw("""
            DELETE FROM form_nonces
            WHERE nonce_hash = \(bind: hasher.hash(nonce, for: .formNonce)) AND session_hash = \(bind: sessionHash)
            RETURNING nonce_hash
            """).all(decoding: Row.self)
        return !rows.isEmpty
    }

    func purge(olderThan cutoff: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM form_nonces WHERE created_at < \(bind: cutoff)").run()
    }
}
