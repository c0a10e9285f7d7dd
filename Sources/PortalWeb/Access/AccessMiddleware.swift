import AccessControl
import Audit
import Foundation
import Hummingbird
import Storage

/// Enforces a route group's ``Access`` before its handlers run: not signed in goes to the
/// sign-in page; signed in without the permission gets the 403 page, and the refusal is audited.
/// An admitted request carries its ``Admission`` on to the group's typed context.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    let access: Access
    let forms: FormCheck
    let database: PortalDatabase
    let audit: AuditLog
    let now: @Sendable () -> Date

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.admission = Admission(access: access, forms: forms)
        if case .public = access { return try await next(request, context) }
        guard let user = context.identity else { throw SignInRequired() }
        guard access.admits(user.roles) else {
            try await audit.append(AuditEvent(
                action: .accessDenied, outcome: .refused, actor: user.username, role: user.roles.joined,
                address: context.clientAddress, requestID: context.requestID,
                details: ["method": request.method.rawValue, "path": request.uri.path]),
                at: now(), on: database.database(logger: context.logger))
            throw OutsideRole()
        }
        return try await next(request, context)
    }
}

/// A page the signed-in user's roles do not include: 403 with its own message (a refused form
/// token says something else).
struct OutsideRole: UserFacingError {
    var status: HTTPResponse.Status { .forbidden }
    var retryAfterSeconds: Int? { nil }
    var logReason: String { "the signed-in user's roles do not include this page" }
    func message(_ renderer: PageRenderer, in language: Language) -> String? {
        renderer.text("error_403_role", in: language)
    }
}

/// Not signed in: a redirect to the sign-in page (thrown so that code stays linear).
package struct SignInRequired: Error {
    package init() {}
}

/// Turns ``SignInRequired`` into a redirect to the sign-in page.
struct SignInRedirectMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch is SignInRequired {
            return PageRenderer.redirect(
                to: context.sessionEndedByAdmin ? "/signin?ended=1" : context.sessionExpired ? "/signin?expired=1" : "/signin")
        }
    }
}
