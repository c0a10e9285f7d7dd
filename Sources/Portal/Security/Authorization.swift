import Audit
import Foundation
import Hummingbird
import Storage

/// Server-side checks every protected route makes, whatever the page showed: signed in, holding
/// a permitted role, and a valid CSRF token on forms. A refusal for a missing role is audited.
struct Authorization: Sendable {
    let database: PortalDatabase
    let csrf: CSRF
    let audit: AuditLog
    let now: @Sendable () -> Date

    /// Not signed in: a redirect to the sign-in page (thrown so handlers stay linear).
    struct SignInRequired: Error {}

    func requireUser(_ context: PortalRequestContext) throws -> SignedInUser {
        guard let user = context.identity else { throw SignInRequired() }
        return user
    }

    /// The user, if they hold one of `roles`; otherwise 403 and an audit entry.
    func require(anyOf roles: Set<Role>, request: Request, context: PortalRequestContext) async throws -> SignedInUser {
        let user = try requireUser(context)
        guard user.has(anyOf: roles) else {
            try await audit.append(AuditEvent(
                action: .accessDenied, outcome: .refused, actor: user.username,
                role: user.roles.sorted().map(\.rawValue).joined(separator: ","),
                address: context.clientAddress, requestID: context.requestID,
                details: ["method": request.method.rawValue, "path": request.uri.path]),
                at: now(), on: database.database(logger: context.logger))
            throw HTTPError(.forbidden)
        }
        return user
    }

    func requireCSRF(_ token: String?, for user: SignedInUser) throws {
        guard csrf.isValid(token, expected: user.csrfToken) else { throw HTTPError(.forbidden) }
    }
}

/// Turns ``Authorization/SignInRequired`` into a redirect to the sign-in page.
struct SignInRedirectMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch is Authorization.SignInRequired {
            return PageRenderer.redirect(to: context.sessionExpired ? "/signin?expired=1" : "/signin")
        }
    }
}
