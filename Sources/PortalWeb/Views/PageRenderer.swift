import AccessControl
import Crypto
import Foundation
import Hummingbird
import Mustache
import TeleTAN

/// Renders typed page models (``PageModel``) into HTML responses, adding what every page needs:
/// the texts of the request's language, the signed-in user and its CSRF token.
package struct PageRenderer: Sendable {
    let library: MustacheLibrary
    package let strings: StringTable
    /// Part of the stylesheet's and script's URLs: a digest of their content, so a browser that
    /// cached them (they are served with `max-age=3600`) fetches the new files after a deploy.
    let assetVersion: String
    /// The authority's time zone: every time a page shows is in it, with the zone named.
    package let timeZone: TimeZone

    package init(assets: AssetFiles, strings: StringTable, timeZone: TimeZone) throws {
        self.timeZone = timeZone
        var templates: [String: MustacheTemplate] = [:]
        for (name, text) in assets.templates {
            templates[name] = try MustacheTemplate(string: text)
        }
        library = MustacheLibrary(templates: templates)
        self.strings = strings
        var digest = SHA256()
        for file in ["css/portal.css", "js/portal.js"] {
            digest.update(data: assets.publicFiles[file] ?? [])
        }
        assetVersion = KeyedHasher.hex(digest.finalize().prefix(6))
    }

    struct TemplateMissing: Error { let name: String }

    package func page<Page: PageModel>(
        _ page: Page, status: HTTPResponse.Status = .ok, context: PortalRequestContext, headers: HTTPFields = [:]
    ) throws -> Response {
        let texts = strings[context.language]
        let html = try html(
            page, language: context.language, requestID: context.requestID,
            user: context.identity.map { user in
                UserBanner(
                    username: user.username, csrf: user.csrfToken,
                    roles: user.roles.sorted().map { texts["role_\($0.rawValue)"] ?? $0.rawValue }.joined(separator: ", "))
            })
        var allHeaders = headers
        allHeaders[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: allHeaders, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The page's HTML. With `checking`, every name the template uses that nothing answered is
    /// recorded there (tests only: it wraps each lookup).
    func html<Page: PageModel>(
        _ page: Page, language: Language, requestID: String, user: UserBanner?, checking: TemplateCheck? = nil
    ) throws -> String {
        let texts = strings[language]
        let rendered = try RenderedPage(
            page: page, t: texts, lang: language.rawValue, otherLang: language.other.rawValue,
            requestID: requestID, assetVersion: assetVersion,
            title: texts[page.titleKey] ?? texts["app_name"] ?? "", user: user)
        let html = if let checking {
            library.render(checking.root(rendered), withTemplate: Page.template)
        } else {
            library.render(rendered, withTemplate: Page.template)
        }
        checking?.finish()
        guard let html else { throw TemplateMissing(name: Page.template) }
        return html
    }

    /// A date and time as people of `language` read it, in the authority's time zone with its
    /// name ("24 Nov 2026, 10:00 CET"; "24. Nov. 2026, 10:00 MEZ").
    package func dateTime(_ date: Date, in language: Language) -> String {
        var style = Date.FormatStyle.dateTime.day().month(.abbreviated).year()
            .hour(.twoDigits(amPM: .omitted)).minute().timeZone(.specificName(.short))
            .locale(Locale(identifier: language.locale))
        style.timeZone = timeZone
        return date.formatted(style)
    }

    /// A day without its year as people of `language` read it, in the authority's time zone
    /// ("24 Nov", "24. Nov."): chart axes and their tables.
    package func dayAndMonth(_ date: Date, in language: Language) -> String {
        var style = Date.FormatStyle.dateTime.day().month(.abbreviated).locale(Locale(identifier: language.locale))
        style.timeZone = timeZone
        return date.formatted(style)
    }

    /// A time of today in the authority's zone ("14:32"), for deadlines a page names.
    package func time(_ date: Date, in language: Language) -> String {
        var style = Date.FormatStyle.dateTime.hour(.twoDigits(amPM: .omitted)).minute(.twoDigits)
            .locale(Locale(identifier: language.locale))
        style.timeZone = timeZone
        return date.formatted(style)
    }

    /// A text of the request's language with `{name}` placeholders filled in.
    package func text(_ key: String, in language: Language, _ values: [String: String] = [:]) -> String {
        values.reduce(strings[language][key] ?? "") { $0.replacingOccurrences(of: "{\($1.key)}", with: $1.value) }
    }

    /// The notice a redirect asked for with `?parameter=value`, from the texts `prefix + value`;
    /// nil for no or an unknown value (a URL cannot make a page say anything else).
    package func notice(_ request: Request, parameter: String, allowed: Set<String>, prefix: String, in language: Language) -> String? {
        guard let value = request.uri.queryParameters[Substring(parameter)].map(String.init), allowed.contains(value) else { return nil }
        return text(prefix + value, in: language)
    }

    package static func redirect(to location: String, cookies: [Cookie] = []) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location])
        for cookie in cookies { response.setCookie(cookie) }
        return response
    }
}
