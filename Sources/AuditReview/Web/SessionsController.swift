import AccessControl
import Audit
import Foundation
import Hummingbird
import PortalWeb
import Storage
import TeleTAN

/// `/admin/sessions` (who is signed in, **End session**) and `/admin/lockouts` (locked usernames
/// and addresses, **Lift lock**). Ending a session signs its user out on their next request.
struct SessionsController: Sendable {
    let database: PortalDatabase
    let directory: SessionDirectory
    let lockouts = Lockouts()
    let activity = LockoutActivity()
    let audit: AuditLog
    let renderer: PageRenderer
    let now: @Sendable () -> Date
    /// The sign-in throttle's lock scopes (other modules keep their own locks in the same table).
    static let scopes = ["user", "address"]

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/admin/sessions", access: .permission(.manageSessionsAndLockouts))
            .get(use: sessions)
            .post("end", form: EndForm.self, use: endSession)
        routes.group("/admin/lockouts", access: .permission(.manageSessionsAndLockouts))
            .get(use: locks)
            .post("lift", form: LiftForm.self, use: liftLock)
    }

    struct EndForm: PortalForm {
        let session: String?
        /// Whose session: narrows the search for the handle to that user's sessions.
        let username: String?
    }

    struct LiftForm: PortalForm {
        let scope: String?
        let key: String?
    }

    @Sendable func sessions(_ request: Request, context: PermittedContext) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        let db = database.database(logger: context.logger)
        let time = now()
        let entries = try await directory.active(now: time, on: db)
        try await audit.appendView("sessions", of: request, by: acting, at: time, on: db)
        let language = context.language
        let notice = renderer.notice(request, parameter: "result", allowed: ["ended", "gone", "own"], prefix: "admin_sessions_", in: language)
        return try renderer.page(SessionsPage(
            sessions: entries, viewer: user, notice: notice, renderer: renderer, language: language), context: context)
    }

    @Sendable func endSession(_ request: Request, context: PermittedContext, form: EndForm) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        let db = database.database(logger: context.logger)
        let time = now()
        guard let handle = form.session, let username = form.username,
              let entry = try await directory.find(handle: handle, of: username, now: time, on: db) else {
            return PageRenderer.redirect(to: "/admin/sessions?result=gone")
        }
        // Their own session they end with Sign out, which also clears the cookie.
        guard !entry.belongs(to: user) else {
            try await audit.append(AuditEvent(.adminSessionEnd, .refused, by: acting, subject: "user:\(entry.username)",
                                              details: ["reason": "own_session"]), at: time, on: db)
            return PageRenderer.redirect(to: "/admin/sessions?result=own")
        }
        let ended = try await db.transaction { tx in
            guard try await directory.end(entry, now: time, on: tx) else { return false }
            try await audit.append(AuditEvent(.adminSessionEnd, .success, by: acting, subject: "user:\(entry.username)",
                                              details: ["signed_in_at": entry.signedInAt.formatted(.iso8601)]), at: time, on: tx)
            return true
        }
        return PageRenderer.redirect(to: "/admin/sessions?result=\(ended ? "ended" : "gone")")
    }

    @Sendable func locks(_ request: Request, context: PermittedContext) async throws -> Response {
        let acting = context.acting
        let db = database.database(logger: context.logger)
        let time = now()
        let active = try await lockouts.active(scopes: Self.scopes, now: time, on: db)
        try await audit.appendView("lockouts", of: request, by: acting, at: time, on: db)
        let language = context.language
        let notice = renderer.notice(request, parameter: "result", allowed: ["lifted", "gone"], prefix: "admin_lockouts_", in: language)
        var locks: [LockoutsPage.Lock] = []
        for lock in active {
            locks.append(.init(lock: lock, activity: try await activity.summary(scope: lock.scope, key: lock.key, on: db)))
        }
        return try renderer.page(LockoutsPage(locks: locks, notice: notice, renderer: renderer, language: language), context: context)
    }

    @Sendable func liftLock(_ request: Request, context: PermittedContext, form: LiftForm) async throws -> Response {
        let acting = context.acting
        guard let scope = form.scope, Self.scopes.contains(scope), let key = form.key, !key.isEmpty, key.count <= 300 else {
            throw HTTPError(.badRequest)
        }
        let db = database.database(logger: context.logger)
        let time = now()
        let lifted = try await db.transaction { tx in
            guard let ended = try await lockouts.lift(scope: scope, key: key, now: time, on: tx) else { return false }
            try await audit.append(AuditEvent(.adminLockoutLift, .success, by: acting, subject: "\(scope):\(key)"), at: time, on: tx)
            if ended.refused > 1 { try await audit.append(WebFoundation.refusalSummary(ended), at: time, on: tx) }
            return true
        }
        return PageRenderer.redirect(to: "/admin/lockouts?result=\(lifted ? "lifted" : "gone")")
    }
}
