import Foundation
import Hummingbird
import Storage
import HTTPTypes
import NIOCore
import NIOHTTP1

/// The request rules of the CWA verification API, before any handler runs: bodies over 10,000
/// bytes and chunked bodies are refused with 406, a body that is not JSON with 415; a forwarded
/// client address is used behind a trusted proxy. Every error leaves as a small JSON body, never
/// as a 500 for bad input; a trusted realm or the database out of reach is a 503.
struct CWARequestMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    static let maxBodySize = 10_000
    static let malformedBody = "malformed JSON"
    let trustProxy: Bool

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
            return Self.json(status: status, ["status": .int(status.code), "error": .string(error.body ?? status.reasonPhrase)], headers: headers)
        } catch let error as BearerTokenVerifier.RealmUnavailable {
            // The warning is TrustedRealm's, once per fetch attempt (at most one per 10 s): a line
            // per refused request would let a flood of tokens flood the log. The realm's URL,
            // never the token.
            context.logger.debug("trusted IAM unreachable: request refused with 503", metadata: [
                "realms": "\(error.realms.joined(separator: ","))"])
            return Self.json(status: .serviceUnavailable, ["status": .int(503), "error": .string("identity provider unreachable, try again shortly")],
                             headers: [.retryAfter: "10"])
        } catch is DecodingError {
            return Self.json(status: .badRequest, ["status": .int(400), "error": .string("malformed JSON")])
        } catch is NIOTooManyBytesError {
            return Self.json(status: .notAcceptable, ["status": .int(406), "error": .string("body too large")])
        } catch is HTTPParserError {
            return Self.json(status: .badRequest, ["status": .int(400), "error": .string("malformed request body")])
        } catch {
            if let kind = PortalDatabase.unavailability(of: error) {
                context.logger.warning("database unavailable: request refused with 503", metadata: ["reason": "\(kind.rawValue)"])
                return Self.json(status: .serviceUnavailable, ["status": .int(503), "error": .string("busy, try again shortly")],
                                 headers: [.retryAfter: "5"])
            }
            context.logger.error("request failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
            return Self.json(status: .internalServerError, ["status": .int(500), "error": .string("internal error")])
        }
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
