import Hummingbird

/// 413 at once for a request whose `Content-Length` is above the body limit
/// (`maxUploadSize`, 16 KiB): Hummingbird would refuse it only after reading that much, and a
/// client that announces a large body and sends none kept the request (and its connection)
/// waiting until the idle timeout. A body sent in chunks, without `Content-Length`, is still cut
/// off at the limit where it is read (`NIOTooManyBytesError`, 413 too).
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let text = request.headers[.contentLength], Self.length(text) > context.maxUploadSize {
            throw HTTPError(.contentTooLarge)
        }
        return try await next(request, context)
    }

    /// The announced length; one too long for an `Int` counts as the largest.
    static func length(_ text: String) -> Int {
        if let length = Int(text) { return length }
        return !text.isEmpty && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber) ? .max : 0
    }
}
