import Hummingbird
import Storage
import Logging
import NIOCore
import NIOHTTP1

/// Errors the portal raises on purpose, with what the page should say.
enum PortalError: Error {
    /// A limit was hit; `global` tells the service-wide limit from the officer's own.
    case tooManyRequests(retryAfterSeconds: Int, global: Bool)
    /// The verification service did not confirm a teleTAN.
    case serviceUnavailable
}

/// Turns every error into a page in the user's language: 400, 403, 404, 405, 413, 429, 500 and 503.
/// Unexpected errors are logged with the request id and shown as 500 without details.
struct ErrorPageMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    let renderer: PageRenderer
    /// Lets "not found" through to the middleware outside it: the static-file middleware serves a
    /// file only when what is inside it found nothing.
    var passesNotFound = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where passesNotFound && error.status == .notFound {
            throw error
        } catch let error as PortalError {
            switch error {
            case .tooManyRequests(let seconds, let global):
                let text = (context.language.strings[global ? "error_429_global" : "error_429"] ?? "")
                    .replacingOccurrences(of: "{wait}", with: DurationText.text(seconds: seconds, in: context.language))
                return try errorPage(.tooManyRequests, message: text, context: context, headers: [.retryAfter: String(seconds)])
            case .serviceUnavailable:
                return try errorPage(.serviceUnavailable, context: context, headers: [.retryAfter: "30"])
            }
        } catch let error as HTTPError {
            let status: HTTPResponse.Status = [400, 403, 404, 405, 413, 429, 503].contains(error.status.code) ? error.status
                : error.status.code >= 500 ? .internalServerError : .badRequest
            return try errorPage(status, context: context, headers: error.headers)
        } catch is DecodingError, is URLEncodedFormError {
            return try errorPage(.badRequest, context: context)
        } catch is NIOTooManyBytesError {
            return try errorPage(.contentTooLarge, context: context)
        } catch is HTTPParserError {
            // A malformed body (bad chunk framing, a body cut short): the client's fault.
            return try errorPage(.badRequest, context: context)
        } catch where PortalDatabase.isOverloaded(error) {
            // Too busy for now (no database connection became free in time), not broken.
            context.logger.warning("database busy: request refused with 503")
            return try errorPage(.serviceUnavailable, context: context, headers: [.retryAfter: "5"])
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return try errorPage(.internalServerError, context: context)
        }
    }

    private func errorPage(
        _ status: HTTPResponse.Status, message: String? = nil, context: Context, headers: HTTPFields = [:]
    ) throws -> Response {
        let strings = context.language.strings
        var allowed = HTTPFields()
        if let retry = headers[.retryAfter] { allowed[.retryAfter] = retry }
        if let allow = headers[.allow] { allowed[.allow] = allow }
        return try renderer.page("error", status: status, context: context, values: [
            "status": status.code,
            "title": strings["error_\(status.code)_title"] ?? status.reasonPhrase,
            "message": message ?? strings["error_\(status.code)"] ?? "",
        ], headers: allowed)
    }
}
