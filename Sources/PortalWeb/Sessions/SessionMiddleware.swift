import AccessControl
import Audit
import Foundation
import Hummingbird
import Storage

/// Finds the request's session in the database and attaches the signed-in user to the context.
/// An expired session is deleted, audited and its cookie cleared.
package struct SessionMiddleware: RouterMiddleware {
    package typealias Context = PortalRequestContext
    package static let cookieName = "portal_session"

    let database: PortalDatabase
    let sessions: SessionStore
    let csrf: CSRF
    let audit: AuditLog
    let now: @Sendable () -> Date

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let cookie = request.cookies[Self.cookieName]?.value else {
            return try await next(request, context)
        }
        var context = context
        let db = database.database(logger: context.logger)
        let time = now()
        switch try await sessions.lookup(cookieValue: cookie, now: time, on: db) {
        case .active(let record):
            try await sessions.touch(record, address: context.clientAddress, now: time, on: db)
            context.identity = SignedInUser(
                username: record.username, roles: record.roleSet, sessionHash: record.id!,
                csrfToken: csrf.token(forSession: record.id!))
            return try await next(request, context)
        case .expired(let record):
            let address = context.clientAddress, requestID = context.requestID
            try await db.transaction { tx in
                guard try await sessions.end(sessionHash: record.id!, on: tx) else { return }
                try await audit.append(AuditEvent(
                    action: .sessionExpired, outcome: .success, actor: record.username,
                    address: address, requestID: requestID), at: time, on: tx)
            }
            context.sessionExpired = true
            return Self.clearCookie(in: try await next(request, context), secure: context.isHTTPS)
        case .unknown:
            // A cookie of the right shape whose session is gone: the cleanup removed it after it
            // expired (or it ended elsewhere). Signing out clears the cookie, so this is nearly
            // always an expired session, and saying so is what the person needs to hear.
            if RandomToken.isWellFormed(cookie) {
                if try await sessions.wasEndedByAdmin(cookieValue: cookie, on: db) {
                    context.sessionEndedByAdmin = true
                } else {
                    context.sessionExpired = true
                }
            }
            return Self.clearCookie(in: try await next(request, context), secure: context.isHTTPS)
        }
    }

    /// Clears the stale cookie unless the handler already set a new session (a sign-in).
    static func clearCookie(in response: Response, secure: Bool) -> Response {
        var response = response
        let setsSession = response.headers[values: .setCookie].contains { $0.hasPrefix(cookieName + "=") }
        if !setsSession { response.setCookie(clearingCookie(secure: secure)) }
        return response
    }

    /// `SameSite=Lax`: a link to the portal from the intranet or an e-mail (a top-level GET from
    /// another site) arrives signed in; cross-site POSTs and embedded requests carry no session,
    /// and every form also needs its CSRF token and a same-origin `Origin` (docs/security.md).
    package static func cookie(value: String, secure: Bool) -> Cookie {
        Cookie(name: cookieName, value: value, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
    }

    package static func clearingCookie(secure: Bool) -> Cookie {
        Cookie(name: cookieName, value: "", maxAge: 0, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
    }
}
