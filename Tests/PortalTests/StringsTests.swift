import Foundation
import TeleTAN
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb
@testable import Issuance
@testable import SignIn
@testable import Hotline
@testable import AuditReview

/// The texts of both languages, the templates' use of them, and the spelling alphabets.
final class StringsTests: XCTestCase {
    /// The foundation's table and every feature's, by name.
    static let tables: [(name: String, table: StringTable)] = [
        ("web", WebFoundation.strings), ("signin", SignInFeature.strings), ("issuance", IssuanceFeature.strings),
        ("hotline", HotlineFeature.strings), ("audit", AuditReviewFeature.strings),
    ]

    func testEveryTableHasBothLanguagesWithTheSameKeysAndNoEmptyText() {
        XCTAssertEqual(Self.tables.count, PortalApp.featureTypes.count + 1, "a feature's table is missing here")
        for (name, table) in Self.tables {
            XCTAssertFalse(table.english.isEmpty, name)
            XCTAssertEqual(Set(table.english.keys), Set(table.german.keys), name)
            for (key, text) in table.english.merging(table.german, uniquingKeysWith: { $0 + $1 }) {
                XCTAssertFalse(text.trimmingCharacters(in: .whitespaces).isEmpty, "\(name): \(key)")
            }
        }
    }

    func testNoTwoTablesDefineTheSameKey() {
        var owner: [String: String] = [:]
        for (name, table) in Self.tables {
            for key in table.english.keys {
                if let other = owner[key] { XCTFail("\(key) is defined by \(other) and \(name)") }
                owner[key] = name
            }
        }
        XCTAssertEqual(Set(owner.keys), Set(PortalApp.strings.english.keys))
    }

    /// Reads every template in every feature's folder under Templates/.
    func testEveryTextATemplateUsesExists() throws {
        let templates = repositoryRoot.appendingPathComponent("Templates")
        let files = try XCTUnwrap(FileManager.default.subpathsOfDirectory(atPath: templates.path)).filter { $0.hasSuffix(".mustache") }
        XCTAssertEqual(Set(files.map { $0.split(separator: "/").first.map(String.init) ?? "" }), ["web", "signin", "issuance", "hotline", "audit"])
        var used = Set<String>()
        for file in files {
            let text = try String(contentsOf: templates.appendingPathComponent(file), encoding: .utf8)
            used.formUnion(text.matches(of: /\{\{[#^\/]?t\.([a-z0-9_]+)\}\}/).map { String($0.output.1) })
        }
        XCTAssertGreaterThan(used.count, 30)
        XCTAssertEqual(used.subtracting(PortalApp.strings.english.keys), [])
    }

    /// The binary carries Templates/ and Public/ as they are in the repository (the build
    /// plugin ran on this tree), and a directory given instead is read the same way.
    func testBuiltInAssetsAreTheRepositorysFiles() throws {
        let builtIn = try AssetFiles.load()
        let fromDisk = try AssetFiles.load(
            templatesDirectory: repositoryRoot.appendingPathComponent("Templates").path,
            publicDirectory: repositoryRoot.appendingPathComponent("Public").path)
        XCTAssertEqual(builtIn.templates, fromDisk.templates)
        XCTAssertEqual(builtIn.publicFiles, fromDisk.publicFiles)
        XCTAssertNotNil(builtIn.templates["web/header"])
        XCTAssertNotNil(builtIn.publicFiles["css/portal.css"])
        XCTAssertThrowsError(try AssetFiles.load(templatesDirectory: "/nonexistent-templates"))
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
        // A configured limit, exact and with one spelled out (German dative after "nach").
        XCTAssertEqual(DurationText.limit(seconds: 3600, in: .english), "one hour")
        XCTAssertEqual(DurationText.limit(seconds: 3600, in: .german), "einer Stunde")
        XCTAssertEqual(DurationText.limit(seconds: 5400, in: .english), "90 minutes")
        XCTAssertEqual(DurationText.limit(seconds: 7200, in: .german), "2 Stunden")
        XCTAssertEqual(DurationText.limit(seconds: 60, in: .german), "einer Minute")
        XCTAssertEqual(DurationText.limit(seconds: 45, in: .english), "45 seconds")
    }
}
