import Foundation
import Hummingbird

/// App-facing success bodies, padded to one fixed size, so that a network observer cannot tell a
/// real response from the answer to a dummy (`cwa-fake: 1`) request, nor one endpoint's from
/// another's, by length.
enum PaddedResponse {
    static let bodySize = 512

    static func registrationToken(_ token: String) -> Response {
        make(status: .created, fields: ["registrationToken": .string(token)])
    }

    static func tan(_ tan: String) -> Response {
        make(status: .created, fields: ["tan": .string(tan)])
    }

    static func testResult(sessionCreated: Date) -> Response {
        make(status: .ok, fields: ["testResult": .int(2), "sc": .int(Int(sessionCreated.timeIntervalSince1970))])
    }

    private static func make(status: HTTPResponse.Status, fields: [String: CWARequestMiddleware.Value]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var object = fields
        object["responsePadding"] = .string("")
        let bare = (try? encoder.encode(object))?.count ?? 0
        object["responsePadding"] = .string(padding(count: max(0, bodySize - bare)))
        return CWARequestMiddleware.json(status: status, body: (try? encoder.encode(object)) ?? Data())
    }

    private static func padding(count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
