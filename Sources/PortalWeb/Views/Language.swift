import Foundation

/// The two languages of the portal's pages.
package enum Language: String, Sendable, CaseIterable {
    case german = "de"
    case english = "en"

    package static let cookieName = "portal_lang"

    /// The language switch's choice, else the browser's first supported preference, else English.
    package static func preferred(cookie: String?, acceptLanguage: String?) -> Language {
        if let cookie, let chosen = Language(rawValue: cookie) { return chosen }
        guard let acceptLanguage else { return .english }
        let ranked = acceptLanguage.split(separator: ",").compactMap { part -> (Language, Double)? in
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first?.lowercased().prefix(2), let language = Language(rawValue: String(tag)) else { return nil }
            let quality = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return quality > 0 ? (language, quality) : nil
        }
        return ranked.max { $0.1 < $1.1 }?.0 ?? .english
    }

    package var other: Language { self == .german ? .english : .german }

    /// The locale dates and numbers are formatted in.
    package var locale: String { self == .german ? "de_DE" : "en_GB" }
}
