import Foundation
import TeleTAN
import TestSupport
import XCTest
@testable import Portal

/// The texts of both languages, the templates' use of them, and the spelling alphabets.
final class StringsTests: XCTestCase {
    func testBothLanguagesHaveTheSameKeysAndNoEmptyText() {
        XCTAssertEqual(Set(Strings.english.keys), Set(Strings.german.keys))
        for (key, text) in Strings.english.merging(Strings.german, uniquingKeysWith: { $0 + $1 }) {
            XCTAssertFalse(text.trimmingCharacters(in: .whitespaces).isEmpty, key)
        }
    }

    func testEveryTextATemplateUsesExists() throws {
        let templates = repositoryRoot.appendingPathComponent("Templates")
        var used = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: templates.path) where file.hasSuffix(".mustache") {
            let text = try String(contentsOf: templates.appendingPathComponent(file), encoding: .utf8)
            used.formUnion(text.matches(of: /\{\{[#^\/]?t\.([a-z0-9_]+)\}\}/).map { String($0.output.1) })
        }
        XCTAssertFalse(used.isEmpty)
        XCTAssertEqual(used.subtracting(Strings.english.keys), [])
    }

    func testEveryTeleTANCharacterIsSpelledInBothLanguages() {
        for language in Language.allCases {
            var words = Set<String>()
            for character in TeleTAN.alphabet {
                let word = SpellingAlphabet.spell(character, in: language)
                XCTAssertGreaterThan(word.count, 1, "\(character) in \(language)")
                XCTAssertEqual(word.first?.isUppercase, true, "\(word) is capitalised like the others")
                words.insert(word)
            }
            XCTAssertEqual(words.count, TeleTAN.alphabet.count, "every character has its own word in \(language)")
        }
        XCTAssertEqual(SpellingAlphabet.spell("2", in: .german), "Zwo")
        XCTAssertEqual(SpellingAlphabet.spell("9", in: .english), "Niner")
        XCTAssertEqual(SpellingAlphabet.spell("A", in: .german), "Aachen")
    }

    func testDurationsReadNaturally() {
        XCTAssertEqual(DurationText.text(seconds: 1, in: .english), "1 second")
        XCTAssertEqual(DurationText.text(seconds: 30, in: .english), "30 seconds")
        XCTAssertEqual(DurationText.text(seconds: 15, in: .german), "15 Sekunden")
        XCTAssertEqual(DurationText.text(seconds: 600, in: .english), "10 minutes")
        XCTAssertEqual(DurationText.text(seconds: 121, in: .german), "3 Minuten")
        XCTAssertEqual(DurationText.text(seconds: 85_973, in: .english), "24 hours")
        XCTAssertEqual(DurationText.text(seconds: 3600 * 2, in: .german), "2 Stunden")
        XCTAssertEqual(DurationText.text(seconds: 0, in: .german), "1 Sekunde")
    }
}
