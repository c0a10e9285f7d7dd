import FluentKit
import Foundation
import SQLKit
import Storage

/// How a callback attempt went.
package enum CallbackOutcome: String, Sendable, CaseIterable {
    case reached
    case noAnswer = "no_answer"
    case wrongNumber = "wrong_number"
    case refused
}

/// The shared callback queue. The caller's number and name are sealed (``ContactVault``) and
/// deleted when the callback ends (wrong number, refused, or unreachable after the last attempt;
/// after **Reached** when the call it continues ends, so a dropped line can be called again) and
/// at the latest after the retention time; the entry stays, without them, so the queue can say
/// what became of it. A number waits at most once (a unique index on the waiting entries'
/// fingerprints). **Take** is one conditional UPDATE: of two agents taking at once, one gets it.
package struct Callbacks: Sendable {
    package struct Row: Decodable, Sendable {
        package let id: UUID
        package let call_id: UUID
        package let created_at: Date
        package let sealed_contact: String?
        package let phone_fingerprint: String?
        package let status: String
        package let outcome: String?
        package let attempts: Int
        package let taken_by: String?
        package let taken_at: Date?
        package let closed_at: Date?

        package var isWaiting: Bool { status == "waiting" }

        /// Who holds the entry now (nil when nobody does, or their take ran out).
        package func holder(now: Date, takeTimeout: TimeInterval) -> String? {
            guard isWaiting, let taken_by, let taken_at, taken_at > now.addingTimeInterval(-takeTimeout) else { return nil }
            return taken_by
        }
    }

    package enum Take: Equatable, Sendable {
        case taken
        /// Another agent holds it.
        case takenByOther
        /// Closed, expired or unknown.
        case notWaiting
    }

    /// What **Call back later** did.
    package enum Queued: Equatable, Sendable {
        case queued
        /// The number waits in the queue already (since then): not queued twice.
        case alreadyWaiting(since: Date)
        /// The call had ended meanwhile (a second submit): nothing queued.
        case callNotOpen
    }

    package enum Recorded: Equatable, Sendable {
        /// Ended: the contact data is gone.
        case closed(outcome: String, phoneFingerprint: String?)
        /// No answer: back in the queue.
        case requeued(attempts: Int)
        /// The agent does not hold this entry (any more).
        case notHeld
    }

    let vault: ContactVault
    /// How long a take lasts if the agent leaves the entry.
    package let takeTimeout: TimeInterval
    /// After this many unanswered attempts the callback closes as unreachable.
    package let maximumAttempts: Int
    /// Contact data is deleted this long after queueing at the latest.
    package let retention: TimeInterval

    package init(vault: ContactVault, takeTimeout: TimeInterval, maximumAttempts: Int, retention: TimeInterval) {
        self.vault = vault
        self.takeTimeout = takeTimeout
        self.maximumAttempts = maximumAttempts
        self.retention = retention
    }

    private static let columns: SQLQueryString = """
        id, call_id, created_at, sealed_contact, phone_fingerprint, status, outcome, attempts, taken_by, taken_at, closed_at
        """

    /// Queues a callback for `contact`; the new entry's id.
    package func queue(from callID: UUID, contact: ContactVault.Contact, phoneFingerprint: String, at time: Date, on db: any Database) async throws -> UUID {
        let id = UUID()
        try await sql(db).raw("""
            INSERT INTO hotline_callbacks (id, call_id, created_at, sealed_contact, phone_fingerprint, status, outcome, attempts,
                taken_by, taken_at, closed_at)
            VALUES (\(bind: id), \(bind: callID), \(bind: time), \(bind: try vault.seal(contact, for: id)), \(bind: phoneFingerprint),
                'waiting', NULL, 0, NULL, NULL, NULL)
            """).run()
        return id
    }

    package func find(_ id: UUID, on db: any Database) async throws -> Row? {
        try await sql(db).raw("SELECT \(Self.columns) FROM hotline_callbacks WHERE id = \(bind: id)").first(decoding: Row.self)
    }

    /// The entry's contact data, while it still has them.
    package func contact(of row: Row) -> ContactVault.Contact? {
        row.sealed_contact.flatMap { vault.open($0, for: row.id) }
    }

    /// The entry for this number that waits now, if any (its fingerprints under every live key).
    package func waiting(phoneFingerprints: [String], now: Date, on db: any Database) async throws -> Row? {
        try await sql(db).raw("""
            SELECT \(Self.columns) FROM hotline_callbacks
            WHERE status = 'waiting' AND phone_fingerprint IN (\(binds: phoneFingerprints))
              AND created_at > \(bind: now.addingTimeInterval(-retention))
            """).first(decoding: Row.self)
    }

    /// Waiting entries, oldest first (not those past the retention time that the cleanup has
    /// not reached yet).
    package func waiting(now: Date, on db: any Database) async throws -> [Row] {
        try await sql(db).raw("""
            SELECT \(Self.columns) FROM hotline_callbacks
            WHERE status = 'waiting' AND created_at > \(bind: now.addingTimeInterval(-retention))
            ORDER BY created_at LIMIT 200
            """).all(decoding: Row.self)
    }

    /// How many entries wait, and since when the oldest.
    package func waitingCount(now: Date, on db: any Database) async throws -> (count: Int, oldest: Date?) {
        struct Row: Decodable { let n: Int; let oldest: Date? }
        let row = try await sql(db).raw("""
            SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM hotline_callbacks
            WHERE status = 'waiting' AND created_at > \(bind: now.addingTimeInterval(-retention))
            """).first(decoding: Row.self)
        return (row?.n ?? 0, row?.oldest)
    }

    /// Entries closed in the last day, newest first (without contact data).
    package func recentlyClosed(now: Date, on db: any Database) async throws -> [Row] {
        try await sql(db).raw("""
            SELECT \(Self.columns) FROM hotline_callbacks
            WHERE status = 'closed' AND closed_at > \(bind: now.addingTimeInterval(-24 * 60 * 60))
            ORDER BY closed_at DESC LIMIT 50
            """).all(decoding: Row.self)
    }

    /// Gives the entry to `agent` unless another agent holds it.
    package func take(_ id: UUID, by agent: String, now: Date, on db: any Database) async throws -> Take {
        struct Taken: Decodable { let id: UUID }
        let taken = try await sql(db).raw("""
            UPDATE hotline_callbacks SET taken_by = \(bind: agent), taken_at = \(bind: now)
            WHERE id = \(bind: id) AND status = 'waiting' AND sealed_contact IS NOT NULL
              AND created_at > \(bind: now.addingTimeInterval(-retention))
              AND (taken_by IS NULL OR taken_by = \(bind: agent) OR taken_at <= \(bind: now.addingTimeInterval(-takeTimeout)))
            RETURNING id
            """).all(decoding: Taken.self)
        if !taken.isEmpty { return .taken }
        guard let row = try await find(id, on: db), row.isWaiting else { return .notWaiting }
        return .takenByOther
    }

    /// Records an attempt by the agent holding the entry.
    package func record(_ outcome: CallbackOutcome, of id: UUID, by agent: String, now: Date, on db: any Database) async throws -> Recorded {
        try await db.transaction { tx in
            // The agent who took it, even past the take timeout, as long as nobody else took it since.
            guard let row = try await find(id, on: tx), row.isWaiting, row.sealed_contact != nil,
                  row.taken_by == agent
            else { return .notHeld }
            let attempts = row.attempts + 1
            let closesAs: String? = switch outcome {
            case .noAnswer: attempts >= maximumAttempts ? "unreachable" : nil
            case .reached, .wrongNumber, .refused: outcome.rawValue
            }
            struct Changed: Decodable { let id: UUID }
            let changed: [Changed]
            if let closesAs {
                // Reached: the number and name stay (sealed) for the call that continues, until it ends.
                let keepsContact = outcome == .reached
                changed = try await sql(tx).raw("""
                    UPDATE hotline_callbacks SET status = 'closed', outcome = \(bind: closesAs), attempts = \(bind: attempts),
                        sealed_contact = \(unsafeRaw: keepsContact ? "sealed_contact" : "NULL"), phone_fingerprint = NULL,
                        closed_at = \(bind: now), taken_by = NULL, taken_at = NULL
                    WHERE id = \(bind: id) AND status = 'waiting' AND taken_by = \(bind: agent) AND attempts = \(bind: row.attempts)
                    RETURNING id
                    """).all(decoding: Changed.self)
            } else {
                changed = try await sql(tx).raw("""
                    UPDATE hotline_callbacks SET attempts = \(bind: attempts), taken_by = NULL, taken_at = NULL
                    WHERE id = \(bind: id) AND status = 'waiting' AND taken_by = \(bind: agent) AND attempts = \(bind: row.attempts)
                    RETURNING id
                    """).all(decoding: Changed.self)
            }
            guard !changed.isEmpty else { return .notHeld }
            return closesAs.map { .closed(outcome: $0, phoneFingerprint: row.phone_fingerprint) } ?? .requeued(attempts: attempts)
        }
    }

    /// Deletes the contact data of every entry queued longer than the retention time; the entry
    /// closes as expired (or keeps the outcome it had). Returns the ids, for the audit trail.
    package func expire(now: Date, on db: any Database) async throws -> [UUID] {
        struct Expired: Decodable { let id: UUID }
        return try await sql(db).raw("""
            UPDATE hotline_callbacks SET sealed_contact = NULL, phone_fingerprint = NULL, status = 'closed',
                outcome = CASE WHEN status = 'waiting' THEN 'expired' ELSE outcome END,
                closed_at = COALESCE(closed_at, \(bind: now)), taken_by = NULL, taken_at = NULL
            WHERE (sealed_contact IS NOT NULL OR phone_fingerprint IS NOT NULL)
              AND created_at <= \(bind: now.addingTimeInterval(-retention))
            RETURNING id
            """).all(decoding: Expired.self).map(\.id)
    }

    /// Entries (without contact data by then) go with their calls.
    package func purge(now: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM hotline_callbacks WHERE created_at < \(bind: now.addingTimeInterval(-Calls.kept))").run()
    }
}

/// Keyed fingerprints of the numbers that received a teleTAN, kept two weeks: "this number
/// received a teleTAN 3 days ago".
package struct NumberHistory: Sendable {
    /// How long a fingerprint is kept.
    package let window: TimeInterval

    package init(window: TimeInterval) {
        self.window = window
    }

    package func record(_ fingerprint: String, at time: Date, on db: any Database) async throws {
        try await sql(db).raw("INSERT INTO hotline_number_history (fingerprint, issued_at) VALUES (\(bind: fingerprint), \(bind: time))").run()
    }

    /// When the number last received a teleTAN, within the window. `fingerprints`: the number's
    /// under every live key, or the one a row keeps (which finds only entries under that same key).
    package func lastTeleTAN(for fingerprints: [String], now: Date, on db: any Database) async throws -> Date? {
        struct Row: Decodable { let issued_at: Date }
        return try await sql(db).raw("""
            SELECT issued_at FROM hotline_number_history
            WHERE fingerprint IN (\(binds: fingerprints)) AND issued_at > \(bind: now.addingTimeInterval(-window))
            ORDER BY issued_at DESC LIMIT 1
            """).first(decoding: Row.self)?.issued_at
    }

    package func purge(now: Date, on db: any Database) async throws {
        try await sql(db).raw("DELETE FROM hotline_number_history WHERE issued_at <= \(bind: now.addingTimeInterval(-window))").run()
    }
}
