import AccessControl
import Audit
import Foundation
import HTTPTypes
import Hummingbird
import Storage

/// One declared route: its method, its path as the router writes it, and what it needs.
package struct RouteDeclaration: Sendable, Hashable {
    package let method: HTTPRequest.Method
    package let path: String
    package let access: Access

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.access == rhs.access
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(method.rawValue)
        hasher.combine(path)
    }
}

/// A group's ``Access`` with the request context its handlers get: ``PortalRequestContext``
/// for `.public`, ``SignedInContext`` (the user, never nil) for `.signedIn`, and
/// ``PermittedContext`` (the user and the ``ActingUser`` under the permission) for
/// `.permission(p)`. So the permission is named once, where the group is declared.
package struct RouteAccess<Context: RequestContext>: Sendable {
    package let access: Access
    /// The group's routes in their context, under the group that enforces `access`.
    let typed: @Sendable (RouterGroup<PortalRequestContext>) -> RouterGroup<Context>
}

extension RouteAccess where Context == PortalRequestContext {
    /// Anyone, signed in or not: sign-in, health checks, the language switch.
    package static var `public`: Self { Self(access: .public, typed: { $0 }) }
}

extension RouteAccess where Context == SignedInContext {
    /// Any signed-in person, whatever their roles (the start page, signing out).
    package static var signedIn: Self { Self(access: .signedIn, typed: { $0.group(context: SignedInContext.self) }) }
}

extension RouteAccess where Context == PermittedContext {
    /// A signed-in person whose roles grant the permission.
    package static func permission(_ permission: Permission) -> Self {
        Self(access: .permission(permission), typed: { $0.group(context: PermittedContext.self) })
    }
}

/// The only way features add routes: each group declares its ``Access``, which a middleware on
/// the group enforces, and every route is recorded with it. The route x role test reads
/// ``declarations`` and the router's table: a route added to the router some other way has no
/// declaration and fails it.
package final class DeclaredRoutes {
    let router: Router<PortalRequestContext>
    let database: PortalDatabase
    let audit: AuditLog
    let forms: FormCheck
    let now: @Sendable () -> Date
    package private(set) var declarations: [RouteDeclaration] = []

    init(router: Router<PortalRequestContext>, database: PortalDatabase, audit: AuditLog, forms: FormCheck, now: @escaping @Sendable () -> Date) {
        self.router = router
        self.database = database
        self.audit = audit
        self.forms = forms
        self.now = now
    }

    /// Routes under `path` that need `access`, with handlers in that access's context.
    package func group<Context>(_ path: RouterPath = "", access: RouteAccess<Context>) -> DeclaredGroup<Context> {
        let guarded = router.group(path)
            .add(middleware: AccessMiddleware(access: access.access, forms: forms, database: database, audit: audit, now: now))
        return DeclaredGroup(group: access.typed(guarded), path: path, access: access.access, routes: self)
    }

    fileprivate func record(_ declaration: RouteDeclaration) {
        declarations.append(declaration)
    }
}

/// A group of routes sharing one ``Access``. It offers `get` to every group; `post` only as
/// ``post(_:form:use:)`` on signed-in groups, where the form is declared with the route and
/// checked before the handler runs, and plain `post` only on public groups (the sign-in forms,
/// which check their pre-session token). A signed-in handler that forgets the CSRF check cannot
/// be written.
package struct DeclaredGroup<Context: RequestContext> {
    let group: RouterGroup<Context>
    let path: RouterPath
    let access: Access
    let routes: DeclaredRoutes

    @discardableResult
    package func get<Output: ResponseGenerator>(
        _ path: RouterPath = "", use handler: @escaping @Sendable (Request, Context) async throws -> Output
    ) -> Self {
        on(path, method: .get, use: handler)
    }

    fileprivate func on<Output: ResponseGenerator>(
        _ path: RouterPath, method: HTTPRequest.Method, use handler: @escaping @Sendable (Request, Context) async throws -> Output
    ) -> Self {
        group.on(path, method: method, use: handler)
        routes.record(RouteDeclaration(method: method, path: self.path.appendingPath(path).description, access: access))
        return self
    }
}

extension DeclaredGroup where Context == PortalRequestContext {
    /// A public form (sign-in): the handler reads it through ``FormCheck/preSessionForm(_:of:context:)``.
    @discardableResult
    package func post<Output: ResponseGenerator>(
        _ path: RouterPath = "", use handler: @escaping @Sendable (Request, Context) async throws -> Output
    ) -> Self {
        on(path, method: .post, use: handler)
    }
}

extension DeclaredGroup where Context: SignedInRequestContext {
    /// A signed-in form route: the CSRF token is checked against the session (403 when missing or
    /// wrong) and the form decoded (400 when malformed) before `handler` gets it.
    @discardableResult
    package func post<Form: PortalForm, Output: ResponseGenerator>(
        _ path: RouterPath = "", form: Form.Type, use handler: @escaping @Sendable (Request, Context, Form) async throws -> Output
    ) -> Self {
        on(path, method: .post) { request, context in
            try await handler(request, context, try await context.checkedForm(form, of: request))
        }
    }

    /// A signed-in form route whose form has a one-use nonce: as above, and the nonce checked.
    @discardableResult
    package func post<Form: NoncedForm, Output: ResponseGenerator>(
        _ path: RouterPath = "", form: Form.Type, use handler: @escaping @Sendable (Request, Context, Form) async throws -> Output
    ) -> Self {
        on(path, method: .post) { request, context in
            try await handler(request, context, try await context.checkedForm(form, of: request))
        }
    }
}
