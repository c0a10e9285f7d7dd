import HTTPTypes
import Hummingbird

/// Headers every response gets: a strict CSP (no inline script or style), no framing, no MIME
/// sniffing, no referrer, HSTS on TLS, and `no-store` for everything but static files.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    static let viewCookie = "portal_view"
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
            // A cookie that changes with every page: Chromium keeps even `no-store` pages in its
            // back/forward cache, but restores one only if no cookie changed since it was stored
            // there. So Back or Forward to a page that showed a teleTAN loads it anew (and finds
            // it already shown), also without JavaScript. Firefox never keeps `no-store` pages.
            response.setCookie(Cookie(
                name: Self.viewCookie, value: String(RandomToken.make().prefix(16)), path: "/",
                secure: context.isHTTPS, httpOnly: true, sameSite: .strict))
        }
        response.headers[HTTPField.Name("X-Request-ID")!] = context.requestID
        return response
    }
}

/// Refuses cross-site unsafe requests before any handler runs: `Sec-Fetch-Site` from modern
/// browsers, and `Origin` compared with the portal's public origin (`--public-url`), never with
/// the `Host` the request names. The CSRF token is the second, independent check.
struct OriginCheckMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    let publicOrigin: PublicOrigin
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if ![.get, .head, .options].contains(request.method) {
            if request.comesFromAnotherSite {
                throw HTTPError(.forbidden, message: "cross-site request: Sec-Fetch-Site \(RefusalReason.quoted(request.headers[.secFetchSite]))")
            }
            let site = request.headers[.secFetchSite]
            // With `Referrer-Policy: no-referrer` browsers send `Origin: null` even for our own
            // forms; that is accepted only when the browser also vouches "same-origin".
            if let origin = request.headers[.origin], !(origin == "null" && site == "same-origin") {
                guard publicOrigin.matches(origin: origin) else {
                    throw HTTPError(.forbidden, message: "cross-origin request: Origin \(RefusalReason.quoted(origin)) is not the public URL '\(publicOrigin)' (--public-url, port included)")
                }
            }
        }
        return try await next(request, context)
    }
}

/// Answers 421 to a request whose `Host` is not the portal's public host and port: a name made
/// to resolve to the portal's address (DNS rebinding) gets no page. Health checks are exempt:
/// load balancers send the backend's address. Two `Host` headers are a 400 everywhere (RFC 9112,
/// 3.2): the portal would check the first, a proxy or cache in front might use the other.
struct HostCheckMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    let publicOrigin: PublicOrigin

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // The first `Host` became the request's authority; any other is left among the headers.
        guard request.headers[values: .repeatedHost].isEmpty else {
            throw HTTPError(.badRequest, message: "more than one Host header")
        }
        guard request.uri.path.hasPrefix("/health/") || request.head.authority.map(publicOrigin.matches(authority:)) == true else {
            throw HTTPError(.misdirectedRequest, message: "Host \(RefusalReason.quoted(request.head.authority)) is not the public host '\(publicOrigin.authority)' of --public-url (port included unless the scheme's default; a proxy must pass the port on, e.g. nginx's Host $http_host)")
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    /// `Host` among the header fields: HTTPTypes keeps the first as the authority (and marks its
    /// own `.host` unavailable), so one found here is a second.
    static let repeatedHost = HTTPField.Name("Host")!
}

extension Request {
    /// True when the browser says the request was started by another site (or a sibling
    /// subdomain): `Sec-Fetch-Site` other than `same-origin` and `none` (typed, bookmarked).
    /// Clients that send no such header are not judged here.
    package var comesFromAnotherSite: Bool {
        guard let site = headers[.secFetchSite] else { return false }
        return site != "same-origin" && site != "none"
    }
}
