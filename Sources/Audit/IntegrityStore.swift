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

    /// Checkpoints newest first (highest seq, then latest signed), `limit` at a time below `beforeSeq`.
    static func checkpoints(atOrBelow maxSeq: Int64, atLeast minSeq: Int64, limit: Int, on db: any Database) async throws -> [AuditCheckpoint] {
        try await sql(db).raw("""
            SELECT seq, hash, signed_at, key_id, signature FROM audit_checkpoints
            WHERE seq <= \(bind: maxSeq) AND seq >= \(bind: minSeq) ORDER BY seq DESC, signed_at DESC, id DESC LIMIT \(bind: limit)
            """).all(decoding: CheckpointRow.self).compactMap(\.checkpoint)
    }

    static func latestSignedAt(on db: any Database) async throws -> Date? {
        struct Row: Decodable { let signed_at: Date }
        return try await sql(db).raw("SELECT signed_at FROM audit_checkpoints ORDER BY signed_at DESC, id DESC LIMIT 1")
            .first(decoding: Row.self)?.signed_at
    }

    static func record(_ verification: AuditVerification, on db: any Database) async throws {
        try await sql(db).raw("""
            INSERT INTO audit_verifications (verified_at, "full", from_seq, to_seq, checked, first_bad_seq, problem)
            VALUES (\(bind: verification.verifiedAt), \(bind: verification.full), \(bind: verification.fromSeq), \(bind: verification.toSeq),
                    \(bind: Int64(verification.checkedEntries)), \(bind: verification.firstBrokenSeq), \(bind: verification.problem))
            """).run()
    }

    static func lastVerification(on db: any Database) async throws -> AuditVerification? {
        struct Row: Decodable {
            let verified_at: Date
            let full: Bool
            let from_seq: Int64
            let to_seq: Int64
            let checked: Int64
            let first_bad_seq: Int64?
            let problem: String?
        }
        guard let row = try await sql(db).raw("""
            SELECT verified_at, "full", from_seq, to_seq, checked, first_bad_seq, problem FROM audit_verifications
            ORDER BY verified_at DESC, id DESC LIMIT 1
            """).first(decoding: Row.self) else { return nil }
        return AuditVerification(verifiedAt: row.verified_at, full: row.full, fromSeq: row.from_seq, toSeq: row.to_seq,
                                 checkedEntries: Int(row.checked), firstBrokenSeq: row.first_bad_seq, problem: row.problem)
    }

    static func deleteVerifications(before time: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM audit_verifications WHERE verified_at < \(bind: time)").run()
    }

    /// The retention floor; `lock` holds its row until the transaction ends (PostgreSQL), which
    /// serialises the scheduled job across instances.
    static func floor(lock: Bool = false, on db: any Database) async throws -> AuditChainVerifier.StartPoint {
        struct Row: Decodable { let seq: Int64; let hash: String }
        let suffix = lock && isPostgreSQL(db) ? " FOR UPDATE" : ""
        guard let row = try await sql(db).raw("SELECT seq, hash FROM audit_floor WHERE id = 1\(unsafeRaw: suffix)").first(decoding: Row.self) else {
            throw AuditIntegrityError.floorMissing
        }
        return .init(seq: row.seq, hash: row.hash)
    }

    static func moveFloor(to point: AuditChainVerifier.StartPoint, on db: any Database) async throws {
        try await sql(db).raw("UPDATE audit_floor SET seq = \(bind: point.seq), hash = \(bind: point.hash) WHERE id = 1").run()
    }

    static func head(on db: any Database) async throws -> AuditChainVerifier.StartPoint {
        guard let head = try await AuditHead.find(1, on: db) else { throw AuditError.headMissing }
        return .init(seq: head.seq, hash: head.hash)
    }
}
