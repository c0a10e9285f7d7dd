import Hummingbird
import HTTPTypes

/// In front of the static files. Hummingbird's `FileMiddleware` picks a content type from the
/// name's extension, so `/js/portal.js%00.html` would be named HTML whatever file a provider finds
/// for it, and it answers some `Range` headers with an invalid 206 (a negative length). A NUL in
/// a path is therefore a 400 here, and `Range` is dropped: our files and pages are small, a full
/// 200 is always fine. So no answer may say `Accept-Ranges: bytes`, which `FileMiddleware`
/// puts on every file: it is taken off.
struct StaticFileGuardMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path.contains("\0") || path.lowercased().contains("%00") {
            throw HTTPError(.badRequest)
        }
        var forwarded = request
        if request.headers[.range] != nil {
            var head = request.head
            head.headerFields[.range] = nil
            forwarded = Request(head: head, body: request.body)
        }
        var response = try await next(forwarded, context)
        response.headers[.acceptRanges] = nil
        return response
    }
}
