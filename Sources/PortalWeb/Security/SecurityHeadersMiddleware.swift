import HTTPTypes
import Hummingbird

/// Headers every response gets: a strict CSP (no inline script or style), no framing, no MIME
/// sniffing, no referrer, HSTS on TLS, and `no-store` for everything but static files.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    static var contentSecurityPolicy: String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        if context.isHTTPS {
            response.headers[.strictTransportSecurity] = "max-age=31536000; includeSubDomains"
        }
        if response.headers[.cacheControl] == nil {
            response.headers[.cacheControl] = "no-store"
        }
        response.headers[HTTPField.Name("X-Request-ID")!] = context.requestID
        return response
    }
}

/// Refuses cross-site unsafe requests before any handler runs: `Sec-Fetch-Site` from modern
/// browsers, and `Origin` compared with the host the request was sent to. The CSRF token is the
/// second, independent check.
struct OriginCheckMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if ![.get, .head, .options].contains(request.method) {
            let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!]
            if let site, site != "same-origin", site != "none" {
                throw HTTPError(.forbidden, message: "cross-site request")
            }
            // With `Referrer-Policy: no-referrer` browsers send `Origin: null` even for our own
            // forms; that is accepted only when the browser also vouches "same-origin".
            if let origin = request.headers[.origin], !(origin == "null" && site == "same-origin") {
                guard let host = request.head.authority, Self.origin(origin, matchesHost: host) else {
                    throw HTTPError(.forbidden, message: "cross-origin request")
                }
            }
        }
        return try await next(request, context)
    }

    static func origin(_ origin: String, matchesHost host: String) -> Bool {
        for scheme in ["https://", "http://"] where origin.hasPrefix(scheme) {
            return origin.dropFirst(scheme.count).lowercased() == host.lowercased()
        }
        return false
    }
}
