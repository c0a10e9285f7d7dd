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

    /// `back` as a path of this site, normalised, or nil when it is anything else. It must start
    /// with one "/" and hold only printable ASCII other than "\\" (browsers drop tabs and
    /// newlines from URLs, so "/\t/evil.example" would become "//evil.example", another site, and
    /// they read "\\" as "/"; a CR or LF would split the `Location` header). Its path part is then
    /// normalised: dot segments resolved (also "%2e", which browsers resolve too) and never above
    /// the root, duplicate slashes folded, so that no later step can turn it into "//host". The
    /// query and fragment stay as they are.
    static func localPath(_ back: String) -> String? {
        let printable = back.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" }
        guard printable, back.hasPrefix("/"), !back.hasPrefix("//") else { return nil }
        let end = back.firstIndex { $0 == "?" || $0 == "#" } ?? back.endIndex
        return normalised(path: back[..<end]) + back[end...]
    }

    /// An absolute path with its dot segments resolved (RFC 3986, 5.2.4) and empty segments dropped.
    private static func normalised(path: Substring) -> String {
        var kept: [Substring] = []
        var endsInSlash = false
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            switch segment.lowercased() {
            case "", ".", "%2e":
                endsInSlash = true
            case "..", ".%2e", "%2e.", "%2e%2e":
                _ = kept.popLast()
                endsInSlash = true
            default:
                kept.append(segment)
                endsInSlash = false
            }
        }
        let joined = "/" + kept.joined(separator: "/")
        return endsInSlash && !kept.isEmpty ? joined + "/" : joined
    }

    static func plain(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}
