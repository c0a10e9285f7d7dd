import Hummingbird
import HTTPTypes

/// In front of the static files. Hummingbird's `FileMiddleware` picks a content type from the
/// name's extension, so `/js/portal.js%00.html` would be named HTML whatever file a provider finds
/// for it, and it answers some `Range` headers with an invalid 206 (a negative length). A NUL in
/// a path is therefore a 400 here, and `Range` is dropped: our files and pages are small, a full
/// 200 is always fine.
struct StaticFileGuardMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path.contains("\0") || path.lowercased().contains("%00") {
            throw HTTPError(.badRequest)
        }
        guard request.headers[.range] != nil else { return try await next(request, context) }
        var head = request.head
        head.headerFields[.range] = nil
        return try await next(Request(head: head, body: request.body), context)
    }
}
