import FluentKit
import Foundation
import Storage
import TeleTAN

/// The app-facing half of the verification server: teleTAN → registration token → TAN →
/// verification by the submission server. Every value is looked up by its keyed hash (the
/// database compares hashes, never the secrets themselves), and each step is single use.
package struct TeleTANLifecycle: Sendable {
    package enum Refusal: Error, Equatable, Sendable {
        /// Malformed, unknown, expired, revoked or already redeemed teleTAN: one answer for all.
        case invalidTeleTAN
        case unknownRegistrationToken
        case tanAlreadyIssued
        case unknownOrUsedTAN
    }

    package static let tanValidity: TimeInterval = 14 * 24 * 60 * 60
    /// CWA deletes rows older than 21 days.
    package static let retention: TimeInterval = 21 * 24 * 60 * 60

    private let hasher: KeyedHasher
    private let now: @Sendable () -> Date

    package init(hasher: KeyedHasher, now: @escaping @Sendable () -> Date = Date.init) {
        self.hasher = hasher
        self.now = now
    }

    /// Redeems a teleTAN once and returns a new registration token (UUID v4).
    /// The check character is verified too (the original CWA server did not).
    package func registrationToken(for key: String, on db: any Database) async throws -> String {
        guard let teleTAN = TeleTAN(key) else { throw Refusal.invalidTeleTAN }
        let time = now()
        let teleTANHashes = hasher.hashes(teleTAN.value, for: .teleTANStorage)
        let token = UUID().uuidString.lowercased()
        let tokenHash = hasher.hash(token, for: .registrationToken)
        // A conditional UPDATE redeems at most once, even for concurrent requests; the token row
        // is written in the same transaction, so a redeemed teleTAN always has its token.
        if isPostgreSQL(db) {
            // One statement, one round trip: the hot path of the app-facing API.
            struct Row: Decodable { let teletan_type: String }
            let row = try await sql(db).raw("""
                WITH redeemed AS (
                    UPDATE teletans SET redeemed_at = \(bind: time)
                    WHERE hash IN (\(binds: teleTANHashes)) AND redeemed_at IS NULL AND revoked_at IS NULL AND valid_until > \(bind: time)
                    RETURNING type)
                INSERT INTO registration_tokens (id, hash, teletan_type, created_at, tan_issued)
                SELECT \(bind: UUID()), \(bind: tokenHash), type, \(bind: time), \(bind: false) FROM redeemed
                RETURNING teletan_type
                """).first(decoding: Row.self)
            guard row != nil else { throw Refusal.invalidTeleTAN }
            return token
        }
        return try await db.transaction { tx in
            struct Row: Decodable { let type: String }
            guard let row = try await sql(tx).raw("""
                UPDATE teletans SET redeemed_at = \(bind: time)
                WHERE hash IN (\(binds: teleTANHashes)) AND redeemed_at IS NULL AND revoked_at IS NULL AND valid_until > \(bind: time)
                RETURNING type
                """).first(decoding: Row.self)
            else { throw Refusal.invalidTeleTAN }
            try await RegistrationTokenRecord(hash: tokenHash, teleTANType: row.type, createdAt: time).create(on: tx)
            return token
        }
    }

    /// Issues the one TAN of a registration token.
    package func tan(for registrationToken: String, on db: any Database) async throws -> String {
        guard Self.isUUIDv4(registrationToken) else { throw Refusal.unknownRegistrationToken }
        let time = now()
        let tokenHashes = hasher.hashes(registrationToken.lowercased(), for: .registrationToken)
        let tan = UUID().uuidString.lowercased()
        let tanHash = hasher.hash(tan, for: .tan)
        let validUntil = time.addingTimeInterval(Self.tanValidity)
        struct Row: Decodable { let teletan_type: String }
        let issued: Bool
        if isPostgreSQL(db) {
            issued = try await sql(db).raw("""
                WITH issued AS (
                    UPDATE registration_tokens SET tan_issued = \(bind: true)
                    WHERE hash IN (\(binds: tokenHashes)) AND tan_issued = \(bind: false)
                    RETURNING teletan_type)
                INSERT INTO tans (id, hash, teletan_type, created_at, valid_until)
                SELECT \(bind: UUID()), \(bind: tanHash), teletan_type, \(bind: time), \(bind: validUntil) FROM issued
                RETURNING teletan_type
                """).first(decoding: Row.self) != nil
        } else {
            issued = try await db.transaction { tx in
                guard let row = try await sql(tx).raw("""
                    UPDATE registration_tokens SET tan_issued = \(bind: true)
                    WHERE hash IN (\(binds: tokenHashes)) AND tan_issued = \(bind: false)
                    RETURNING teletan_type
                    """).first(decoding: Row.self)
                else { return false }
                try await TANRecord(hash: tanHash, teleTANType: row.teletan_type, createdAt: time, validUntil: validUntil).create(on: tx)
                return true
            }
        }
        guard issued else {
            let exists = try await RegistrationTokenRecord.query(on: db).filter(\.$hash ~~ tokenHashes).count() > 0
            throw exists ? Refusal.tanAlreadyIssued : Refusal.unknownRegistrationToken
        }
        return tan
    }

    /// The session creation time of a registration token; teleTAN sessions are always positive.
    package func sessionCreation(of registrationToken: String, on db: any Database) async throws -> Date {
        guard Self.isUUIDv4(registrationToken),
              let record = try await RegistrationTokenRecord.query(on: db)
                .filter(\.$hash ~~ hasher.hashes(registrationToken.lowercased(), for: .registrationToken)).first()
        else { throw Refusal.unknownRegistrationToken }
        return record.createdAt
    }

    /// Consumes a TAN for the submission server; returns the teleTAN type it stems from.
    package func verify(tan: String, on db: any Database) async throws -> String {
        guard Self.isUUIDv4(tan) else { throw Refusal.unknownOrUsedTAN }
        let time = now()
        struct Row: Decodable { let teletan_type: String }
        guard let row = try await sql(db).raw("""
            UPDATE tans SET redeemed_at = \(bind: time)
            WHERE hash IN (\(binds: hasher.hashes(tan.lowercased(), for: .tan))) AND redeemed_at IS NULL AND valid_until > \(bind: time)
            RETURNING teletan_type
            """).first(decoding: Row.self)
        else { throw Refusal.unknownOrUsedTAN }
        return row.teletan_type
    }

    /// Deletes rows older than the retention time. On PostgreSQL a transaction-level advisory
    /// lock lets one instance do it while the others skip this round.
    /// - Returns: false when another instance holds the lock.
    @discardableResult
    package func purgeExpired(on db: any Database) async throws -> Bool {
        let cutoff = now().addingTimeInterval(-Self.retention)
        return try await db.transaction { tx in
            if isPostgreSQL(tx) {
                struct Lock: Decodable { let locked: Bool }
                let lock = try await sql(tx).raw("SELECT pg_try_advisory_xact_lock(727273) AS locked").first(decoding: Lock.self)
                guard lock?.locked == true else { return false }
            }
            try await TeleTANRecord.query(on: tx).filter(\.$createdAt < cutoff).delete()
            try await RegistrationTokenRecord.query(on: tx).filter(\.$createdAt < cutoff).delete()
            try await TANRecord.query(on: tx).filter(\.$createdAt < cutoff).delete()
            return true
        }
    }

    /// `^[a-f0-9]{8}-[a-f0-9]{4}-4[a-f0-9]{3}-[89aAbB][a-f0-9]{3}-[a-f0-9]{12}$`, as CWA checks.
    package static func isUUIDv4(_ value: String) -> Bool {
        // Checked by hand: a regex literal is compiled again on every call, which showed in profiles.
        let bytes = Array(value.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            switch index {
            case 8, 13, 18, 23: guard byte == UInt8(ascii: "-") else { return false }
            case 14: guard byte == UInt8(ascii: "4") else { return false }
            case 19: guard "89aAbB".utf8.contains(byte) else { return false }
            default: guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) else { return false }
            }
        }
        return true
    }
}
