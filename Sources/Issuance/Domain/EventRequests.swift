import FluentKit
import Foundation
import SQLKit
import Storage

/// EVENT teleTAN requests under the four-eyes rule (`--event-approval two-person`): one event
/// officer asks, a different one approves, and only then can the requester issue it. Each step
/// is a conditional UPDATE, so two approvers at once, or an approval racing a decline, decide
/// once.
package struct EventRequests: Sendable {
    package enum Status: String, Sendable, Codable {
        case pending, approved, declined, issued, expired, withdrawn
    }

    package struct Row: Decodable, Sendable {
        package let id: UUID
        package let requested_by: String
        package let health_authority: String
        package let requested_at: Date
        package let status: String
        package let decided_by: String?
        package let decided_at: Date?
        /// The requester's reason or case reference (no personal data); nil in rows made before.
        package let reason: String?

        package var state: Status { Status(rawValue: status) ?? .expired }

        /// Approved, and the approval not older than ``EventRequests/approvedFor``: the requester may
        /// issue (`markIssued` checks the same in SQL).
        package func isUsableApproval(at time: Date) -> Bool {
            state == .approved && (decided_at ?? .distantPast) > time.addingTimeInterval(-EventRequests.approvedFor)
        }

        /// The state to show: an approval past its time is expired, before the cleanup marks it.
        package func shownState(at time: Date) -> Status {
            state == .approved && !isUsableApproval(at: time) ? .expired : state
        }
    }

    package enum Decision: Equatable, Sendable {
        case done
        /// The approver is the requester: never allowed.
        case ownRequest
        /// Not pending any more (decided by someone else, or expired), or unknown.
        case notPending
    }

    /// A request nobody approved in this time expires.
    package static let pendingFor: TimeInterval = 24 * 60 * 60
    /// An approval the requester did not use in this time expires.
    package static let approvedFor: TimeInterval = 60 * 60

    package init() {}

    func create(requestedBy: String, healthAuthority: String, reason: String, at time: Date, on db: any Database) async throws -> UUID {
        let id = UUID()
        try await sql(db).raw("""
            INSERT INTO event_requests (id, requested_by, health_authority, requested_at, status, decided_by, decided_at, reason)
            VALUES (\(bind: id), \(bind: requestedBy), \(bind: healthAuthority), \(bind: time), \(bind: Status.pending.rawValue), NULL, NULL,
                    \(bind: reason))
            """).run()
        return id
    }

    /// The requester takes back a request that is pending or approved (not yet issued); false
    /// when it is not theirs or no longer open.
    func withdraw(_ id: UUID, by user: String, at time: Date, on db: any Database) async throws -> Bool {
        struct Row: Decodable { let id: UUID }
        return try await !sql(db).raw("""
            UPDATE event_requests SET status = \(bind: Status.withdrawn.rawValue), decided_by = \(bind: user), decided_at = \(bind: time)
            WHERE id = \(bind: id) AND requested_by = \(bind: user)
              AND ((status = \(bind: Status.pending.rawValue) AND requested_at > \(bind: time.addingTimeInterval(-Self.pendingFor)))
                OR (status = \(bind: Status.approved.rawValue) AND decided_at > \(bind: time.addingTimeInterval(-Self.approvedFor))))
            RETURNING id
            """).all(decoding: Row.self).isEmpty
    }

    /// How many of other people's requests wait for a decision (the start page's count).
    func countAwaitingDecision(by user: String, now: Date, on db: any Database) async throws -> Int {
        struct Count: Decodable { let n: Int }
        return try await sql(db).raw("""
            SELECT COUNT(*) AS n FROM event_requests WHERE status = \(bind: Status.pending.rawValue) AND requested_by <> \(bind: user)
              AND requested_at > \(bind: now.addingTimeInterval(-Self.pendingFor))
            """).first(decoding: Count.self)?.n ?? 0
    }

    /// Approves or declines a pending request; never the requester's own.
    func decide(_ id: UUID, approve: Bool, by user: String, at time: Date, on db: any Database) async throws -> Decision {
        struct Row: Decodable { let id: UUID }
        let changed = try await sql(db).raw("""
            UPDATE event_requests SET status = \(bind: (approve ? Status.approved : Status.declined).rawValue),
                decided_by = \(bind: user), decided_at = \(bind: time)
            WHERE id = \(bind: id) AND status = \(bind: Status.pending.rawValue) AND requested_by <> \(bind: user)
              AND requested_at > \(bind: time.addingTimeInterval(-Self.pendingFor))
            RETURNING id
            """).all(decoding: Row.self)
        if !changed.isEmpty { return .done }
        let row = try await find(id, on: db)
        return row?.requested_by == user && row?.state == .pending ? .ownRequest : .notPending
    }

    /// Marks an approved request of `user` as issued, inside the issuing transaction; false when it
    /// is not (any more) approved for them.
    func markIssued(_ id: UUID, requestedBy user: String, at time: Date, on db: any Database) async throws -> Bool {
        struct Row: Decodable { let id: UUID }
        return try await !sql(db).raw("""
            UPDATE event_requests SET status = \(bind: Status.issued.rawValue)
            WHERE id = \(bind: id) AND requested_by = \(bind: user) AND status = \(bind: Status.approved.rawValue)
              AND decided_at > \(bind: time.addingTimeInterval(-Self.approvedFor))
            RETURNING id
            """).all(decoding: Row.self).isEmpty
    }

    package func find(_ id: UUID, on db: any Database) async throws -> Row? {
        try await sql(db).raw("""
            SELECT id, requested_by, health_authority, requested_at, status, decided_by, decided_at, reason
            FROM event_requests WHERE id = \(bind: id)
            """).first(decoding: Row.self)
    }

    /// `user`'s own requests of the last day, newest first.
    func own(_ user: String, now: Date, on db: any Database) async throws -> [Row] {
        try await sql(db).raw("""
            SELECT id, requested_by, health_authority, requested_at, status, decided_by, decided_at, reason
            FROM event_requests WHERE requested_by = \(bind: user) AND requested_at > \(bind: now.addingTimeInterval(-Self.pendingFor))
            ORDER BY requested_at DESC LIMIT 50
            """).all(decoding: Row.self)
    }

    /// Other people's requests waiting for a decision, oldest first.
    func awaitingDecision(by user: String, now: Date, on db: any Database) async throws -> [Row] {
        try await sql(db).raw("""
            SELECT id, requested_by, health_authority, requested_at, status, decided_by, decided_at, reason
            FROM event_requests WHERE status = \(bind: Status.pending.rawValue) AND requested_by <> \(bind: user)
              AND requested_at > \(bind: now.addingTimeInterval(-Self.pendingFor))
            ORDER BY requested_at LIMIT 50
            """).all(decoding: Row.self)
    }

    /// Pending and approved requests past their time become expired; rows are deleted after a week.
    func expire(now: Date, on db: any Database) async throws {
        try await sql(db).raw("""
            UPDATE event_requests SET status = \(bind: Status.expired.rawValue)
            WHERE (status = \(bind: Status.pending.rawValue) AND requested_at <= \(bind: now.addingTimeInterval(-Self.pendingFor)))
               OR (status = \(bind: Status.approved.rawValue) AND decided_at <= \(bind: now.addingTimeInterval(-Self.approvedFor)))
            """).run()
        try await sql(db).raw("DELETE FROM event_requests WHERE requested_at < \(bind: now.addingTimeInterval(-7 * 24 * 60 * 60))").run()
    }
}
