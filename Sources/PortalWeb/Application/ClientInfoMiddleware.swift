import HTTPTypes
import Hummingbird

/// Works out the client address, TLS and language before anything else looks at the request.
package struct ClientInfoMiddleware: RouterMiddleware {
    package typealias Context = PortalRequestContext
    package let trustProxy: Bool
    let publicOrigin: PublicOrigin

    package init(trustProxy: Bool, publicOrigin: PublicOrigin) {
        self.trustProxy = trustProxy
        self.publicOrigin = publicOrigin
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if trustProxy {
            // The proxy appends the peer it saw; the last entry is the one it vouches for.
            if let forwarded = request.headers[HTTPField.Name("X-Forwarded-For")!]?
                .split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !forwarded.isEmpty {
                context.clientAddress = String(forwarded.prefix(64))
            }
            context.isHTTPS = request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
        }
        // Browsers reach an https public URL over TLS, whatever the proxy says: cookies are
        // `Secure` and HSTS is sent even without `X-Forwarded-Proto`.
        if request.uri.scheme == .https || publicOrigin.scheme == "https" { context.isHTTPS = true }
        context.language = Language.preferred(
            cookie: request.cookies[Language.cookieName]?.value,
            acceptLanguage: request.headers[.acceptLanguage])
        return try await next(request, context)
    }
}
