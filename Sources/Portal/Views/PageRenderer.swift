import Crypto
import Foundation
import Hummingbird
import Mustache
import TeleTAN

/// Renders Mustache templates from `Templates/` into HTML responses, adding what every page
/// needs: the strings of the request's language, the signed-in user and its CSRF token.
struct PageRenderer: Sendable {
    let library: MustacheLibrary
    /// Part of the stylesheet's and script's URLs: a digest of their content, so a browser that
    /// cached them (they are served with `max-age=3600`) fetches the new files after a deploy.
    let assetVersion: String

    init(library: MustacheLibrary, publicDirectory: String) {
        self.library = library
        var digest = SHA256()
        for file in ["css/portal.css", "js/portal.js"] {
            digest.update(data: FileManager.default.contents(atPath: (publicDirectory as NSString).appendingPathComponent(file)) ?? Data())
        }
        assetVersion = KeyedHasher.hex(digest.finalize().prefix(6))
    }

    struct TemplateMissing: Error { let name: String }

    /// The `<title>` of each page, as a key of ``Strings``.
    static let titleKeys = [
        "signin": "sign_in_title", "signin-step": "sign_in_title", "signin-password": "password_change_title",
        "home": "home_title", "no-role": "no_role_title", "result": "result_title", "already-shown": "already_shown_title",
    ]

    func page(
        _ template: String, status: HTTPResponse.Status = .ok, context: PortalRequestContext,
        values: [String: Any] = [:], headers: HTTPFields = [:]
    ) throws -> Response {
        var data = values
        let strings = context.language.strings
        data["t"] = strings
        data["lang"] = context.language.rawValue
        data["other_lang"] = context.language.other.rawValue
        data["request_id"] = context.requestID
        data["asset_version"] = assetVersion
        if data["title"] == nil {
            data["title"] = Self.titleKeys[template].flatMap { strings[$0] } ?? strings["app_name"]
        }
        if let user = context.identity {
            data["user"] = [
                "username": user.username,
                "csrf": user.csrfToken,
                "roles": user.roles.sorted().map { strings["role_\($0.rawValue)"] ?? $0.rawValue }.joined(separator: ", "),
            ]
        }
        guard let html = library.render(data, withTemplate: template) else { throw TemplateMissing(name: template) }
        var allHeaders = headers
        allHeaders[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: allHeaders, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func redirect(to location: String, cookies: [Cookie] = []) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location])
        for cookie in cookies { response.setCookie(cookie) }
        return response
    }
}
