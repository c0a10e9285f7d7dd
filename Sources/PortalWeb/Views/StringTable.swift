/// The texts of one feature's pages in both languages. Templates use them as `{{t.key}}`;
/// `StringsTests` checks that every table has the same keys in both languages and that no two
/// features define the same key.
package struct StringTable: Sendable {
    package let english: [String: String]
    package let german: [String: String]

    package init(english: [String: String], german: [String: String]) {
        self.english = english
        self.german = german
    }

    package subscript(language: Language) -> [String: String] {
        language == .german ? german : english
    }

    /// All tables in one; a key defined twice keeps the first table's text.
    package static func merged(_ tables: [StringTable]) -> StringTable {
        StringTable(
            english: tables.reduce(into: [:]) { $0.merge($1.english) { first, _ in first } },
            german: tables.reduce(into: [:]) { $0.merge($1.german) { first, _ in first } })
    }
}
