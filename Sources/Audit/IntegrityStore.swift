import FluentKit
import Foundation
import SQLKit
import Storage

/// Plain-SQL access to the tables of migration 002: checkpoints, verifications and the floor.
enum IntegrityStore {
    static let checkpointsTable = "audit_checkpoints"
    static let verificationsTable = "audit_verifications"
    static let floorTable = "audit_floor"

    private struct CheckpointRow: Decodable {
        let seq: Int64
        let hash: String
        let signed_at: Date
        let key_id: String
        let signature: String

        var checkpoint: AuditCheckpoint? {
            Data(base64Encoded: signature).map {
                AuditCheckpoint(seq: seq, hash: hash, signedAt: signed_at, keyID: key_id, signature: $0)
            }
        }
    }

    static func store(_ checkpoint: AuditCheckpoint, on db: any Database) async throws {
        try await sql(db).raw("""
            INSERT INTO audit_checkpoints (seq, hash, signed_at, key_id, signature)
            VALUES (\(bind: checkpoint.seq), \(bind: checkpoint.hash), \(bind: checkpoint.signedAt), \(bind: checkpoint.keyID),
                    \(bind: checkpoint.signature.base64EncodedString()))
            """).run()
    }

    /// Checkpoints newest first (highest seq, then latest signed), at most `limit`, with `minSeq` ≤ seq ≤ `maxSeq`.
    static func checkpoints(atOrBelow maxSeq: Int64, atLeast minSeq: Int64, limit: Int, on db: any Database) async throws -> [AuditCheckpoint] {
        try await sql(db).raw("""
            SELECT seq, hash, signed_at, key_id, signature FROM audit_checkpoints
            WHERE seq <= \(bind: maxSeq) AND seq >= \(bind: minSeq) ORDER BY seq DESC, signed_at DESC, id DESC LIMIT \(bind: limit)
            """).all(decoding: CheckpointRow.self).compactMap(\.checkpoint)
    }

    /// When the head checkpoint (highest seq, the newest there) was signed: retention's
    /// checkpoints, signed at a lower seq, do not count. One index lookup.
    static func headCheckpointSignedAt(on db: any Database) async throws -> Date? {
        struct Row: Decodable { let signed_at: Date }
        return try await sql(db).raw("SELECT signed_at FROM audit_checkpoints ORDER BY seq DESC, signed_at DESC, id DESC LIMIT 1")
            .first(decoding: Row.self)?.signed_at
    }

    static func record(_ verification: AuditVerification, on db: any Database) async throws {
        try await sql(db).raw("""
            INSERT INTO audit_verifications (verified_at, "full", from_seq, to_seq, checked, first_bad_seq, problem)
            VALUES (\(bind: verification.verifiedAt), \(bind: verification.full), \(bind: verification.fromSeq), \(bind: verification.toSeq),
                    \(bind: Int64(verification.checkedEntries)), \(bind: verification.firstBrokenSeq), \(bind: verification.problem))
            """).run()
    }

    /// The newest recorded verification; `full` true: the newest full check.
    static func lastVerification(full: Bool = false, on db: any Database) async throws -> AuditVerification? {
        struct Row: Decodable {
            let verified_at: Date
            let full: Bool
            let from_seq: Int64
            let to_seq: Int64
            let checked: Int64
            let first_bad_seq: Int64?
            let problem: String?
        }
        let onlyFull: SQLQueryString = full ? "WHERE \"full\" = \(bind: true)" : ""
        guard let row = try await sql(db).raw("""
            SELECT verified_at, "full", from_seq, to_seq, checked, first_bad_seq, problem FROM audit_verifications
            \(onlyFull) ORDER BY verified_at DESC, id DESC LIMIT 1
            """).first(decoding: Row.self) else { return nil }
        return AuditVerification(verifiedAt: row.verified_at, full: row.full, fromSeq: row.from_seq, toSeq: row.to_seq,
                                 checkedEntries: Int(row.checked), firstBrokenSeq: row.first_bad_seq, problem: row.problem)
    }

    static func deleteVerifications(before time: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM audit_verifications WHERE verified_at < \(bind: time)").run()
    }

    /// The retention floor.
    static func floor(on db: any Database) async throws -> AuditChainVerifier.StartPoint {
        guard let floor = try await floorRow(suffix: "", on: db) else { throw AuditIntegrityError.floorMissing }
        return floor
    }

    /// The retention floor, its row held until the transaction ends: on PostgreSQL `FOR UPDATE
    /// SKIP LOCKED`, which serialises the scheduled job across instances without queueing them
    /// (nil: another instance holds it). SQLite has one connection.
    static func lockFloor(on db: any Database) async throws -> AuditChainVerifier.StartPoint? {
        guard isPostgreSQL(db) else { return try await floor(on: db) }
        if let floor = try await floorRow(suffix: " FOR UPDATE SKIP LOCKED", on: db) { return floor }
        _ = try await floor(on: db)  // held, or missing (then this throws)
        return nil
    }

    private static func floorRow(suffix: String, on db: any Database) async throws -> AuditChainVerifier.StartPoint? {
        struct Row: Decodable { let seq: Int64; let hash: String }
        return try await sql(db).raw("SELECT seq, hash FROM audit_floor WHERE id = 1\(unsafeRaw: suffix)").first(decoding: Row.self)
            .map { .init(seq: $0.seq, hash: $0.hash) }
    }

    static func moveFloor(to point: AuditChainVerifier.StartPoint, on db: any Database) async throws {
        try await sql(db).raw("UPDATE audit_floor SET seq = \(bind: point.seq), hash = \(bind: point.hash) WHERE id = 1").run()
    }
}
