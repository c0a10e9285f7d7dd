import Foundation
import Hummingbird
import Storage

/// Health checks for load balancers and orchestrators and the language switch: the web
/// foundation's own public routes. (Metrics have their own listener: ``WebFoundation/makeMetricsRouter()``.)
struct OperationsRoutes: Sendable {
    let database: PortalDatabase
    let readiness: Readiness

    func addRoutes(to routes: DeclaredRoutes) {
        let open = routes.group(access: .public)
        open.get("/health/live") { _, _ in Self.plain("ok") }
        open.get("/health/ready", use: ready)
        open.get("/language/:code", use: switchLanguage)
    }

    /// 503 from SIGTERM on (the drain period, see ``ShutdownDrain``) and while the database is unreachable.
    @Sendable func ready(_ request: Request, context: PortalRequestContext) async throws -> Response {
        guard !readiness.isDraining else {
            return Self.plain("shutting down", status: .serviceUnavailable)
        }
        guard await database.isReachable(logger: context.logger) else {
            return Self.plain("database unreachable", status: .serviceUnavailable)
        }
        return Self.plain("ok")
    }

    /// Remembers the chosen language in a cookie and goes back to a local page.
    @Sendable func switchLanguage(_ request: Request, context: PortalRequestContext) async throws -> Response {
        guard let language = context.parameters.get("code").flatMap(Language.init(rawValue:)) else {
            throw HTTPError(.notFound)
        }
        let back = request.uri.queryParameters["back"].map(String.init) ?? "/"
        return PageRenderer.redirect(to: Self.localPath(back) ?? "/", cookies: [
            Cookie(name: Language.cookieName, value: language.rawValue, maxAge: 365 * 24 * 3600, path: "/",
                   secure: context.isHTTPS, httpOnly: true, sameSite: .lax),
        ])
    }

    /// `path` if it can only lead to a page of this site, else nil: it starts with one "/" and
    /// holds only printable ASCII other than "\\" (browsers drop tabs and newlines from URLs, so
    /// "/\t/evil.example" would become "//evil.example", another site).
    static func localPath(_ path: String) -> String? {
        let printable = path.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" }
        return printable && path.hasPrefix("/") && !path.hasPrefix("//") ? path : nil
    }

    static func plain(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}
