import Mustache

/// What one page shows: a typed model per template, built in its own `X+Model.swift` beside the
/// page from domain values. The renderer adds what every page shares (texts, language, the
/// signed-in user, request id); a template reads the model's values by name (``TemplateValues``),
/// then those shared values.
package protocol PageModel: TemplateValues {
    /// The template's name: its path under `Templates/` without `.mustache`.
    static var template: String { get }
    /// The key of the page's `<title>` in the string tables.
    var titleKey: String { get }
    /// True on pages where switching language would lose something (a sign-in step, a teleTAN
    /// that is shown once).
    var hidesLanguageSwitch: Bool { get }
}

extension PageModel {
    package var hidesLanguageSwitch: Bool { false }
}

/// The signed-in user as the header shows it.
struct UserBanner: TemplateValues {
    let username: String
    let csrf: String
    /// The roles' names in the page's language, comma-separated.
    let roles: String
}

/// What a template renders: the page's own model first, then the values every page shares.
struct RenderedPage: MustacheParent {
    /// The page model, encoded once for this render (``TemplateEncoder``).
    let page: TemplateObject
    let hidesLanguageSwitch: Bool
    let t: [String: String]
    let lang: String
    let otherLang: String
    let requestID: String
    let assetVersion: String
    let title: String
    let user: UserBanner?

    init(
        page: some PageModel, t: [String: String], lang: String, otherLang: String, requestID: String,
        assetVersion: String, title: String, user: UserBanner?
    ) throws {
        self.page = try TemplateEncoder.page(page)
        hidesLanguageSwitch = page.hidesLanguageSwitch
        self.t = t
        self.lang = lang
        self.otherLang = otherLang
        self.requestID = requestID
        self.assetVersion = assetVersion
        self.title = title
        self.user = user
    }

    func child(named name: String) -> Any? {
        if let value = page.child(named: name) { return value }
        switch name {
        case "t": return t
        case "lang": return lang
        case "other_lang": return otherLang
        case "request_id": return requestID
        case "asset_version": return assetVersion
        case "title": return title
        case "user": return user.mustacheValue
        case "hide_language_switch": return hidesLanguageSwitch
        default: return nil
        }
    }
}
