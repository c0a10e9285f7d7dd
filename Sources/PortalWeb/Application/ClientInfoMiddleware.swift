import HTTPTypes
import Hummingbird

/// Works out the client address, TLS and language before anything else looks at the request.
package struct ClientInfoMiddleware: RouterMiddleware {
    package typealias Context = PortalRequestContext
    package let trustProxy: Bool

    package init(trustProxy: Bool) { self.trustProxy = trustProxy }

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
        if request.uri.scheme == .https { context.isHTTPS = true }
        context.language = Language.preferred(
            cookie: request.cookies[Language.cookieName]?.value,
            acceptLanguage: request.headers[.acceptLanguage])
        return try await next(request, context)
    }
}
