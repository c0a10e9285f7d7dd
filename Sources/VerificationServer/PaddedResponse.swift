import Foundation
import Hummingbird

/// App-facing bodies, successes and errors alike, padded to one fixed size, so that a network
/// observer cannot tell a real response from the answer to a dummy (`cwa-fake: 1`) request, a
/// failed request from either, nor one endpoint's from another's, by length.
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

    /// `fields` and `responsePadding`, exactly ``bodySize`` bytes (also the app-facing errors).
    static func make(status: HTTPResponse.Status, fields: [String: CWARequestMiddleware.Value], headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var object = fields
        object["responsePadding"] = .string("")
        let bare = (try? encoder.encode(object))?.count ?? 0
        object["responsePadding"] = .string(padding(count: max(0, bodySize - bare)))
        return CWARequestMiddleware.json(status: status, body: (try? encoder.encode(object)) ?? Data(), headers: headers)
    }

    /// Random letters and digits, as CWA pads. One call to the system generator per 8 characters
    /// (not one per character: that made the kernel's random source the server's biggest cost).
    private static func padding(count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        while bytes.count < count {
            var random = generator.next()
            for _ in 0..<min(8, count - bytes.count) {
                // 256 is not a multiple of 62: the first letters are a little more likely, which
                // does not matter for padding.
                bytes.append(alphabet[Int(random & 0xff) % alphabet.count])
                random >>= 8
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
