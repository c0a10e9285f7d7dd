import FluentKit
import Foundation
import SQLKit
import Storage

/// How a call ended.
package enum CallOutcome: String, Sendable, CaseIterable {
    /// A teleTAN was issued and passed on.
    case teleTANIssued = "teletan_issued"
    case callbackQueued = "callback_queued"
    /// Chosen with **End call**:
    case notEligible = "not_eligible"
    case callerHungUp = "caller_hung_up"
    case informationOnly = "information_only"
    case other
    /// Left open by the agent; closed by the cleanup.
    case abandoned

    /// The outcomes an agent may pick with **End call**.
    package static let endable: [CallOutcome] = [.notEligible, .callerHungUp, .informationOnly, .other]
}

/// The hotline's call records: one per call, with the checks' answers, the outcome, and the
/// issued teleTAN's keyed fingerprint. Every change is a conditional UPDATE on the agent's own
/// open call, so a forged id, another agent's call or an ended one changes nothing.
package struct Calls: Sendable {
    package struct Row: Decodable, Sendable {
        package let id: UUID
        package let agent: String
        package let started_at: Date
        package let ended_at: Date?
        package let outcome: String?
        package let checks: String
        package let callback_id: UUID?
        package let phone_fingerprint: String?
        package let teletan_fingerprint: String?
        package let teletan_issued_at: Date?
        package let readback_attempts: Int
        package let readback_result: String?
        package let readback_sealed: String?

        package var isOpen: Bool { ended_at == nil }

        /// Every check asked, with its answer.
        package var answerMap: [String: Bool] {
            (try? JSONDecoder().decode([String: Bool].self, from: Data(checks.utf8))) ?? [:]
        }

        /// The ticked checks.
        package var answers: Set<String> { Set(answerMap.filter(\.value).map(\.key)) }
    }

    /// Read-backs allowed per call: enough for a few slips, not for guessing.
    package static let readBackLimit = 5
    /// An open call older than this is closed as abandoned.
    package static let abandonedAfter: TimeInterval = 4 * 60 * 60
    /// Call records are kept this long for the overview; the audit trail keeps the rest.
    package static let kept: TimeInterval = 90 * 24 * 60 * 60

    package init() {}

    private static let columns: SQLQueryString = """
        id, agent, started_at, ended_at, outcome, checks, callback_id, phone_fingerprint, teletan_fingerprint, teletan_issued_at,
        readback_attempts, readback_result, readback_sealed
        """

    package func start(
        agent: String, at time: Date, answers: [String: Bool] = [:], callbackID: UUID? = nil, phoneFingerprint: String? = nil,
        on db: any Database
    ) async throws -> UUID {
        let id = UUID()
        try await sql(db).raw("""
            INSERT INTO hotline_calls (id, agent, started_at, ended_at, outcome, checks, callback_id, phone_fingerprint,
                teletan_fingerprint, teletan_issued_at, readback_attempts, readback_result, readback_sealed)
            VALUES (\(bind: id), \(bind: agent), \(bind: time), NULL, NULL, \(bind: Self.encode(answers)), \(bind: callbackID),
                \(bind: phoneFingerprint), NULL, NULL, 0, NULL, NULL)
            """).run()
        return id
    }

    package func find(_ id: UUID, on db: any Database) async throws -> Row? {
        try await sql(db).raw("SELECT \(Self.columns) FROM hotline_calls WHERE id = \(bind: id)").first(decoding: Row.self)
    }

    /// The calls of these ids (one query; unknown ids are left out).
    package func find(_ ids: [UUID], on db: any Database) async throws -> [Row] {
        guard !ids.isEmpty else { return [] }
        return try await sql(db).raw("SELECT \(Self.columns) FROM hotline_calls WHERE id IN (\(binds: ids))").all(decoding: Row.self)
    }

    /// `agent`'s open calls, newest first.
    package func open(of agent: String, on db: any Database) async throws -> [Row] {
        try await sql(db).raw("""
            SELECT \(Self.columns) FROM hotline_calls WHERE agent = \(bind: agent) AND ended_at IS NULL ORDER BY started_at DESC LIMIT 20
            """).all(decoding: Row.self)
    }

    /// Records the answers of `agent`'s open call; false for any other call.
    package func saveAnswers(_ answers: [String: Bool], of id: UUID, agent: String, on db: any Database) async throws -> Bool {
        try await changed(sql(db).raw("""
            UPDATE hotline_calls SET checks = \(bind: Self.encode(answers))
            WHERE id = \(bind: id) AND agent = \(bind: agent) AND ended_at IS NULL AND teletan_fingerprint IS NULL
            RETURNING id
            """))
    }

    /// Links the teleTAN issued in `agent`'s open call; false when the call is not theirs, ended,
    /// or has one already.
    package func attachTeleTAN(_ fingerprint: String, to id: UUID, agent: String, at time: Date, on db: any Database) async throws -> Bool {
        try await changed(sql(db).raw("""
            UPDATE hotline_calls SET teletan_fingerprint = \(bind: fingerprint), teletan_issued_at = \(bind: time)
            WHERE id = \(bind: id) AND agent = \(bind: agent) AND ended_at IS NULL AND teletan_fingerprint IS NULL
            RETURNING id
            """))
    }

    /// Takes the last read-back's sealed result for showing it once.
    package func takeReadBackResult(of id: UUID, agent: String, on db: any Database) async throws -> String? {
        try await db.transaction { tx in
            struct Row: Decodable { let readback_sealed: String? }
            guard let sealed = try await sql(tx).raw("""
                SELECT readback_sealed FROM hotline_calls WHERE id = \(bind: id) AND agent = \(bind: agent)
                """).first(decoding: Row.self)?.readback_sealed
            else { return nil }
            try await sql(tx).raw("UPDATE hotline_calls SET readback_sealed = NULL WHERE id = \(bind: id)").run()
            return sealed
        }
    }

    /// Ends `agent`'s open call. A call that continues a reached callback takes the number and
    /// name the callback kept for it along (see ``Callbacks``).
    package func end(_ id: UUID, agent: String, outcome: CallOutcome, at time: Date, on db: any Database) async throws -> Bool {
        struct Ended: Decodable { let callback_id: UUID? }
        guard let ended = try await sql(db).raw("""
            UPDATE hotline_calls SET ended_at = \(bind: time), outcome = \(bind: outcome.rawValue), readback_sealed = NULL
            WHERE id = \(bind: id) AND agent = \(bind: agent) AND ended_at IS NULL
            RETURNING callback_id
            """).first(decoding: Ended.self)
        else { return false }
        try await forgetCallbackContact(ended.callback_id, on: db)
        return true
    }

    private func forgetCallbackContact(_ callbackID: UUID?, on db: any Database) async throws {
        guard let callbackID else { return }
        try await sql(db).raw("UPDATE hotline_callbacks SET sealed_contact = NULL WHERE id = \(bind: callbackID) AND status = 'closed'").run()
    }

    /// Counts one read-back of `agent`'s open call with a teleTAN, within the limit; the attempt's
    /// number, or nil when none is allowed.
    package func countReadBack(of id: UUID, agent: String, matched: Bool, sealedResult: String, on db: any Database) async throws -> Int? {
        struct Count: Decodable { let readback_attempts: Int }
        return try await sql(db).raw("""
            UPDATE hotline_calls SET readback_attempts = readback_attempts + 1,
                readback_result = \(bind: matched ? "matched" : "mismatched"), readback_sealed = \(bind: sealedResult)
            WHERE id = \(bind: id) AND agent = \(bind: agent) AND ended_at IS NULL AND teletan_fingerprint IS NOT NULL
              AND readback_attempts < \(bind: Self.readBackLimit) AND (readback_result IS NULL OR readback_result <> 'matched')
            RETURNING readback_attempts
            """).first(decoding: Count.self)?.readback_attempts
    }

    /// Closes calls left open too long; their ids and agents.
    package func closeAbandoned(now: Date, on db: any Database) async throws -> [Row] {
        let closed = try await sql(db).raw("""
            UPDATE hotline_calls SET ended_at = \(bind: now), outcome = \(bind: CallOutcome.abandoned.rawValue), readback_sealed = NULL
            WHERE ended_at IS NULL AND started_at <= \(bind: now.addingTimeInterval(-Self.abandonedAfter))
            RETURNING \(Self.columns)
            """).all(decoding: Row.self)
        for call in closed { try await forgetCallbackContact(call.callback_id, on: db) }
        return closed
    }

    /// What the overview counts of a call.
    package struct Summary: Decodable, Sendable {
        package let started_at: Date
        package let outcome: String?
        package let teletan_issued_at: Date?
    }

    /// Calls started since `start`, for the overview (counts only).
    package func started(since start: Date, on db: any Database) async throws -> [Summary] {
        try await sql(db).raw("""
            SELECT started_at, outcome, teletan_issued_at FROM hotline_calls WHERE started_at >= \(bind: start)
            """).all(decoding: Summary.self)
    }

    /// Number fingerprints go after the repeat-caller window; call records after ``kept``.
    package func purge(now: Date, fingerprintWindow: TimeInterval, on db: any Database) async throws {
        try await sql(db).raw("""
            UPDATE hotline_calls SET phone_fingerprint = NULL
            WHERE phone_fingerprint IS NOT NULL AND started_at < \(bind: now.addingTimeInterval(-fingerprintWindow))
            """).run()
        try await sql(db).raw("DELETE FROM hotline_calls WHERE started_at < \(bind: now.addingTimeInterval(-Self.kept))").run()
    }

    /// `{"check_id": true, ...}`: every check asked, with its answer.
    static func encode(_ answers: [String: Bool]) -> String {
        let object = answers
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(object)) ?? Data("{}".utf8), as: UTF8.self)
    }

    private func changed(_ query: SQLRawBuilder) async throws -> Bool {
        struct Row: Decodable { let id: UUID }
        return try await !query.all(decoding: Row.self).isEmpty
    }
}

extension Calls.Row {
    /// What the audit entry of the call's end says: its outcome and length. One place for the
    /// agent's End call and the cleanup's "abandoned".
    package func endedDetails(_ outcome: CallOutcome, at time: Date) -> [String: String] {
        ["outcome": outcome.rawValue, "duration_seconds": String(max(0, Int(time.timeIntervalSince(started_at))))]
    }
}
