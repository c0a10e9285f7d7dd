import Mustache

/// What one page shows: a typed model per template. The renderer adds what every page shares
/// (texts, language, the signed-in user, request id); a template reads the model's properties by
/// name, then those shared values.
package protocol PageModel: Sendable {
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
struct UserBanner: Sendable {
    let username: String
    let csrf: String
    /// The roles' names in the page's language, comma-separated.
    let roles: String
}

/// What a template renders: the page's own model first, then the values every page shares.
struct RenderedPage: MustacheParent {
    let page: any PageModel
    let t: [String: String]
    let lang: String
    let otherLang: String
    let requestID: String
    let assetVersion: String
    let title: String
    let user: UserBanner?

    func child(named name: String) -> Any? {
        if let value = Self.property(name, of: page) { return value }
        switch name {
        case "t": return t
        case "lang": return lang
        case "other_lang": return otherLang
        case "request_id": return requestID
        case "asset_version": return assetVersion
        case "title": return title
        case "user": return user
        case "hide_language_switch": return page.hidesLanguageSwitch
        default: return nil
        }
    }

    /// A stored property of `model` by name; nil when it has none or it is nil (so that
    /// `{{#notice}}` is false for a page without a notice, not the text "nil").
    private static func property(_ name: String, of model: Any) -> Any? {
        guard let value = Mirror(reflecting: model).children.first(where: { $0.label == name })?.value else { return nil }
        let optional = Mirror(reflecting: value)
        guard optional.displayStyle == .optional else { return value }
        return optional.children.first?.value
    }
}
