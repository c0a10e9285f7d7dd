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

/// The only way features add routes: each group declares its ``Access``, which a middleware on
/// the group enforces, and every route is recorded with it. The route x role test reads
/// ``declarations`` and the router's table: a route added to the router some other way has no
/// declaration and fails it.
package final class DeclaredRoutes {
    package typealias Context = PortalRequestContext

    let router: Router<Context>
    let database: PortalDatabase
    let audit: AuditLog
    let now: @Sendable () -> Date
    package private(set) var declarations: [RouteDeclaration] = []

    init(router: Router<Context>, database: PortalDatabase, audit: AuditLog, now: @escaping @Sendable () -> Date) {
        self.router = router
        self.database = database
        self.audit = audit
        self.now = now
    }

    /// Routes under `path` that need `access`.
    package func group(_ path: RouterPath = "", access: Access) -> DeclaredGroup {
        let group = router.group(path).add(middleware: AccessMiddleware(access: access, database: database, audit: audit, now: now))
        return DeclaredGroup(group: group, path: path, access: access, routes: self)
    }

    fileprivate func record(_ declaration: RouteDeclaration) {
        declarations.append(declaration)
    }
}

/// A group of routes sharing one ``Access``; use it like a Hummingbird router group.
package struct DeclaredGroup: RouterMethods {
    package typealias Context = PortalRequestContext
    let group: RouterGroup<Context>
    let path: RouterPath
    let access: Access
    let routes: DeclaredRoutes

    @discardableResult
    package func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == Context {
        group.on(path, method: method, responder: responder)
        routes.record(RouteDeclaration(method: method, path: self.path.appendingPath(path).description, access: access))
        return self
    }

    @discardableResult
    package func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        group.add(middleware: middleware)
        return self
    }
}
