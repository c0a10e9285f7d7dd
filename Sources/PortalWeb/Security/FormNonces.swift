import FluentKit
import Foundation
import Storage
import TeleTAN

/// One-use tokens for the issuing form: each rendered form may create one teleTAN, so a double
/// click or a replayed form cannot create a second.
///
/// A nonce carries its own proof: 128 random bits, the time it was made, and a keyed MAC over
/// both and the session. Showing a form therefore writes nothing: a session may open the start
/// page as often as it likes without growing a table, and the page is one statement cheaper.
/// Using a nonce records its random part in `form_nonces` (as a keyed hash, with the time it was
/// made), and a second use finds it there. A nonce is good for `lifetime` (the session lifetime)
/// after it was made; the cleanup removes used ones once they are older than that.
package struct FormNonces: Sendable {
    /// What the checks allow between the clocks of instances (a nonce made "in the future"); the
    /// cleanup keeps used nonces twice as long past their lifetime, so that an instance whose
    /// clock runs behind still finds one it would accept.
    package static let clockSkewAllowance: Duration = .seconds(60)

    package enum Claim: Equatable {
        case claimed
        /// Used before.
        case alreadyUsed
        /// Not made for this session by this portal, changed, too old, or malformed.
        case invalid
    }

    let hasher: KeyedHasher
    package let lifetime: Duration

    /// `random-made-mac`: 32 hex digits, the Unix time in hex, 64 hex digits.
    package func make(sessionHash: String, now: Date) -> String {
        let random = String(RandomToken.make().prefix(32))
        let made = String(Int64(now.timeIntervalSince1970), radix: 16)
        return "\(random)-\(made)-\(mac(random: random, made: made, sessionHash: sessionHash))"
    }

    /// A nonce found valid when its form was read: made by this portal for `sessionHash`, not
    /// older than `lifetime`. Only ``check(_:sessionHash:now:)`` makes one.
    package struct Checked: Sendable {
        let random: Substring
        let made: Date
        let key: ServerKey
        let sessionHash: String
    }

    /// The nonce's MAC (under any live key), session and age at `now`: nil when it was not made
    /// for this session by this portal, was changed, is too old, or is malformed.
    package func check(_ nonce: String, sessionHash: String, now: Date) -> Checked? {
        guard let (made, key) = verified(nonce, sessionHash: sessionHash),
              made <= now.addingTimeInterval(Self.clockSkewAllowance.seconds),
              now.timeIntervalSince(made) <= lifetime.seconds else { return nil }
        return Checked(random: nonce.prefix(32), made: made, key: key, sessionHash: sessionHash)
    }

    /// Checks the nonce now and uses it up (``consume(_:on:)``): for callers without a form (the
    /// tests of the nonces themselves).
    package func consume(_ nonce: String, sessionHash: String, now: Date, on db: any Database) async throws -> Claim {
        try await consume(check(nonce, sessionHash: sessionHash, now: now), on: db)
    }

    /// `.claimed` exactly once per checked nonce (nil: `.invalid`). Call it inside the issuing
    /// transaction: if that rolls back, the nonce is not used up. On PostgreSQL a concurrent
    /// second submit waits for the first transaction's insert and then finds the row, so it
    /// cannot race past.
    package func consume(_ checked: Checked?, on db: any Database) async throws -> Claim {
        guard let checked else { return .invalid }
        struct Row: Decodable { let nonce_hash: String }
        let rows = try await sql(db).raw("""
            INSERT INTO form_nonces (nonce_hash, session_hash, created_at)
            VALUES (\(bind: KeyedHasher.hash(checked.random, for: .formNonce, key: checked.key.secret)), \(bind: checked.sessionHash), \(bind: checked.made))
            ON CONFLICT (nonce_hash) DO NOTHING
            RETURNING nonce_hash
            """).all(decoding: Row.self)
        return rows.isEmpty ? .alreadyUsed : .claimed
    }

    /// Removes used nonces made before `cutoff` (they are refused by their age anyway).
    package func purge(olderThan cutoff: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM form_nonces WHERE created_at < \(bind: cutoff)").run()
    }

    /// The time a well-formed nonce with a valid MAC for this session was made, and the server key
    /// that made it, else nil. The used nonce is stored under that same key, so a nonce made before
    /// a key rotation is still used up once, not once per key.
    private func verified(_ nonce: String, sessionHash: String) -> (Date, ServerKey)? {
        let parts = nonce.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 32, Self.isHex(parts[0]),
              (1...16).contains(parts[1].utf8.count), Self.isHex(parts[1]), let seconds = Int64(parts[1], radix: 16),
              parts[2].utf8.count == 64, Self.isHex(parts[2]),
              let key = hasher.matchingKey(parts[2], "\(sessionHash)|\(parts[0])|\(parts[1])", for: .formNonceMAC)
        else { return nil }
        return (Date(timeIntervalSince1970: TimeInterval(seconds)), key)
    }

    private func mac(random: some StringProtocol, made: some StringProtocol, sessionHash: String) -> String {
        hasher.hash("\(sessionHash)|\(random)|\(made)", for: .formNonceMAC)
    }

    private static func isHex(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
