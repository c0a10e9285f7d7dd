import Foundation
import Hummingbird
import Storage
import HTTPTypes
import NIOCore
import NIOHTTP1

/// The request rules of the CWA verification API, before any handler runs: bodies over 10,000
/// bytes and chunked bodies are refused with 406, a body that is not JSON with 415; a forwarded
/// client address is used behind a trusted proxy. Every error leaves as a small JSON body, never
/// as a 500 for bad input; a trusted realm or the database out of reach is a 503. With
/// `padsErrors` (the app-facing listener) every error body is padded like a success body
/// (``PaddedResponse``).
struct CWARequestMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    static let maxBodySize = 10_000
    /// The answer to a body the JSON decoder refused, whatever it said: its words (coding keys,
    /// Swift type names) describe this server's code, not the API.
    static let malformedBody = "malformed JSON, or a field missing or of the wrong type"
    let trustProxy: Bool
    let padsErrors: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if trustProxy, let forwarded = request.headers[HTTPField.Name("X-Forwarded-For")!]?
            .split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !forwarded.isEmpty {
            context.clientAddress = String(forwarded.prefix(64))
        }
        do {
            if request.method == .post {
                if request.headers[.transferEncoding]?.lowercased().contains("chunked") == true {
                    throw HTTPError(.notAcceptable, message: "chunked bodies are not accepted")
                }
                let length = request.headers[.contentLength].flatMap(Int.init) ?? 0
                if length > Self.maxBodySize {
                    throw HTTPError(.notAcceptable, message: "body larger than \(Self.maxBodySize) bytes")
                }
                // The media type itself, parameters (`; charset=utf-8`) aside: not a prefix match.
                let mediaType = request.headers[.contentType]?.split(separator: ";").first?
                    .trimmingCharacters(in: .whitespaces).lowercased()
                if length > 0, mediaType != "application/json" {
                    throw HTTPError(.unsupportedMediaType, message: "expected application/json")
                }
            }
            return try await next(request, context)
        } catch let error as HTTPError {
            let status = error.status.code >= 500 ? HTTPResponse.Status.badRequest : error.status
            var headers = HTTPFields()
            if let retry = error.headers[.retryAfter] { headers[.retryAfter] = retry }
            if let allow = error.headers[.allow] { headers[.allow] = allow }
            return errorResponse(status, error.body ?? status.reasonPhrase, headers: headers)
        } catch let error as BearerTokenVerifier.RealmUnavailable {
            // The warning is TrustedRealm's, once per fetch attempt (at most one per 10 s): a line
            // per refused request would let a flood of tokens flood the log. The realm's URL,
            // never the token.
            context.logger.debug("trusted IAM unreachable: request refused with 503", metadata: [
                "realms": "\(error.realms.joined(separator: ","))"])
            return errorResponse(.serviceUnavailable, "identity provider unreachable, try again shortly", headers: [.retryAfter: "10"])
        } catch is DecodingError {
            return errorResponse(.badRequest, Self.malformedBody)
        } catch is NIOTooManyBytesError {
            return errorResponse(.notAcceptable, "body too large")
        } catch is HTTPParserError {
            return errorResponse(.badRequest, "malformed request body")
        } catch {
            if let kind = PortalDatabase.unavailability(of: error) {
                context.logger.warning("database unavailable: request refused with 503", metadata: ["reason": "\(kind.rawValue)"])
                return errorResponse(.serviceUnavailable, "busy, try again shortly", headers: [.retryAfter: "5"])
            }
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return errorResponse(.internalServerError, "internal error")
        }
    }

    /// `{"status": …, "error": …}`, padded on the app-facing listener.
    private func errorResponse(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) -> Response {
        let fields: [String: Value] = ["status": .int(status.code), "error": .string(message)]
        return padsErrors ? PaddedResponse.make(status: status, fields: fields, headers: headers)
            : Self.json(status: status, fields, headers: headers)
    }

    enum Value: Encodable {
        case string(String), int(Int)
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            }
        }
    }

    static func json(status: HTTPResponse.Status, _ object: [String: Value], headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(object)) ?? Data("{}".utf8)
        return json(status: status, body: data, headers: headers)
    }

    static func json(status: HTTPResponse.Status, body: Data, headers: HTTPFields = [:]) -> Response {
        var all = headers
        all[.contentType] = "application/json"
        return Response(status: status, headers: all, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
