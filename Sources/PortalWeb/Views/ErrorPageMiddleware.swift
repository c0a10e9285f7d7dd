import Hummingbird
import Storage
import Logging
import NIOCore
import NIOHTTP1

/// An error a feature raises on purpose, with the status and text its page shows. Domain errors
/// conform to it in their feature's web layer.
package protocol UserFacingError: Error {
    var status: HTTPResponse.Status { get }
    /// Seconds for `Retry-After`, if waiting helps.
    var retryAfterSeconds: Int? { get }
    /// Why, for the log line of a 403 or 421 (never a secret or personal data).
    var logReason: String { get }
    /// The page's message; nil for the status's standard text.
    func message(_ renderer: PageRenderer, in language: Language) -> String?
}

extension UserFacingError {
    package var logReason: String { "\(type(of: self))" }
}

/// The error page.
struct ErrorPage: PageModel {
    static let template = "web/error"
    let status: Int
    let message: String
    var titleKey: String { "error_\(status)_title" }
}

/// Turns every error into a page in the user's language: 400, 403, 404, 405, 413, 421, 429, 500 and 503.
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
        } catch let error as any UserFacingError {
            logRefusal(error.status, reason: error.logReason, request: request, context: context)
            var headers = HTTPFields()
            if let seconds = error.retryAfterSeconds { headers[.retryAfter] = String(seconds) }
            return try errorPage(
                error.status, message: error.message(renderer, in: context.language), context: context, headers: headers)
        } catch let error as HTTPError {
            let status: HTTPResponse.Status = [400, 403, 404, 405, 413, 421, 429, 503].contains(error.status.code) ? error.status
                : error.status.code >= 500 ? .internalServerError : .badRequest
            logRefusal(status, reason: error.body ?? "refused", request: request, context: context)
            return try errorPage(status, context: context, headers: error.headers)
        } catch is DecodingError, is URLEncodedFormError {
            return try errorPage(.badRequest, context: context)
        } catch is NIOTooManyBytesError {
            return try errorPage(.contentTooLarge, context: context)
        } catch is HTTPParserError {
            // A malformed body (bad chunk framing, a body cut short): the client's fault.
            return try errorPage(.badRequest, context: context)
        } catch {
            if let kind = PortalDatabase.unavailability(of: error) {
                // Busy, restarting, read-only or out of disk for now, not broken: the user may retry.
                context.logger.warning("database unavailable: request refused with 503", metadata: ["reason": "\(kind.rawValue)"])
                return try errorPage(.serviceUnavailable, message: renderer.text("error_503_database", in: context.language),
                                     context: context, headers: [.retryAfter: "5"])
            }
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return try errorPage(.internalServerError, context: context)
        }
    }

    /// One line for every 403 and 421, saying why: these are the refusals an operator must be
    /// able to explain (a proxy dropping the port, a wrong --public-url, a stale form).
    private func logRefusal(_ status: HTTPResponse.Status, reason: String, request: Request, context: Context) {
        guard status == .forbidden || status == .misdirectedRequest else { return }
        context.logger.warning("request refused", metadata: [
            "status": "\(status.code)", "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "reason": "\(reason)",
        ])
    }

    private func errorPage(
        _ status: HTTPResponse.Status, message: String? = nil, context: Context, headers: HTTPFields = [:]
    ) throws -> Response {
        var allowed = HTTPFields()
        if let retry = headers[.retryAfter] { allowed[.retryAfter] = retry }
        if let allow = headers[.allow] { allowed[.allow] = allow }
        let page = ErrorPage(status: status, message: message, renderer: renderer, language: context.language)
        return try renderer.page(page, status: status, context: context, headers: allowed)
    }
}

/// A form whose one-use token is not good any more (a page left open too long): 400, and the
/// page says to reload it.
package struct FormExpired: UserFacingError {
    package init() {}
    package var status: HTTPResponse.Status { .badRequest }
    package var retryAfterSeconds: Int? { nil }
    package func message(_ renderer: PageRenderer, in language: Language) -> String? {
        renderer.text("form_expired", in: language)
    }
}
