import Crypto
import TeleTAN
import XCTest
@testable import Hotline

/// The read-back comparison against a keyed fingerprint, and the callback form's inputs.
final class ReadBackTests: XCTestCase {
    let hasher = KeyedHasher(key: SymmetricKey(size: .bits256))

    func check(_ typed: String, against teleTAN: String) -> ReadBack.Result {
        ReadBack(hasher: hasher).compare(typed, fingerprint: hasher.hash(teleTAN, for: .teleTANFingerprint))
    }

    func testMatchesIgnoringCaseSpacesAndDashes() {
        XCTAssertEqual(check("fe9 a5m ak6c", against: "FE9A5MAK6C"), .matches)
        XCTAssertEqual(check("FE9-A5M-AK6C", against: "FE9A5MAK6C"), .matches)
    }

    func testOneMisheardCharacterIsLocated() {
        XCTAssertEqual(check("FE9A5MBK6C", against: "FE9A5MAK6C"), .differs([.init(position: 7, heard: "B", actual: "A")]))
        // A character outside the alphabet (O for 0? there is no 0) is located too.
        XCTAssertEqual(check("FE9A5MOK6C", against: "FE9A5MAK6C"), .differs([.init(position: 7, heard: "O", actual: "A")]))
    }

    func testTwoMisheardCharactersSwappedNeighboursMissingAndExtra() {
        XCTAssertEqual(check("FE9A5NAK6D", against: "FE9A5MAK6C"),
                       .differs([.init(position: 6, heard: "N", actual: "M"), .init(position: 10, heard: "D", actual: "C")]))
        XCTAssertEqual(check("FE9A5MKA6C", against: "FE9A5MAK6C"),
                       .differs([.init(position: 7, heard: "K", actual: "A"), .init(position: 8, heard: "A", actual: "K")]))
        XCTAssertEqual(check("FE9A5AK6C", against: "FE9A5MAK6C"), .differs([.init(position: 6, heard: nil, actual: "M")]))
        XCTAssertEqual(check("FE9A5MMAK6C", against: "FE9A5MAK6C"),
                       .differs([.init(position: 6, heard: "M", actual: nil)]))
    }

    func testFarOffAndOtherTeleTANsAreNotLocated() {
        XCTAssertEqual(check("ABC", against: "FE9A5MAK6C"), .differsEverywhere)
        XCTAssertEqual(check("WPHSATMHD4", against: "FE9A5MAK6C"), .differsEverywhere, "another valid teleTAN")
        XCTAssertEqual(check(String(repeating: "A", count: 100), against: "FE9A5MAK6C"), .differsEverywhere)
    }

    func testPhoneNumbersAreNormalisedAndMasked() {
        XCTAssertEqual(PhoneNumber("030 1234 5678")?.e164, "+493012345678")
        XCTAssertEqual(PhoneNumber("0049 (30) 123-45/678")?.e164, "+493012345678")
        XCTAssertEqual(PhoneNumber("+44 20 7946 0958")?.e164, "+442079460958")
        XCTAssertEqual(PhoneNumber("+49 (0)30 1234 5678")?.e164, "+493012345678", "the bracketed trunk zero")
        XCTAssertNil(PhoneNumber("12ab"))
        XCTAssertNil(PhoneNumber("+49 12"), "too short")
        XCTAssertNil(PhoneNumber("+0 1234567"), "no country code starts with 0")
        XCTAssertNil(PhoneNumber("+1234567890123456"), "longer than E.164 allows")
        XCTAssertEqual(PhoneNumber("030 1234 5678")?.masked, "+49 ••• ••• •• 78")
        XCTAssertEqual(PhoneNumber("030 1234 5678")?.readable, "+49 30 12345678")
        XCTAssertEqual(PersonName.validated("  Erika Mustermann "), "Erika Mustermann")
        XCTAssertNil(PersonName.validated("   "))
        XCTAssertNil(PersonName.validated("Bad\u{0007}Name"))
        XCTAssertNil(PersonName.validated(String(repeating: "x", count: 101)))
    }

    func testChecksFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let example = try HotlineChecks.load(path: root.appendingPathComponent("docs/hotline-checks.example.json").path)
        XCTAssertEqual(example, HotlineChecks.standard, "the example in docs/ is the shipped default")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("checks-\(UUID()).json")
        try Data(#"[{"id":"a","label_de":"A","label_en":"A","required":false},{"id":"a","label_de":"B","label_en":"B","required":true}]"#.utf8).write(to: file)
        XCTAssertThrowsError(try HotlineChecks.load(path: file.path), "duplicate id")
        try Data(#"{"id":"a"}"#.utf8).write(to: file)
        XCTAssertThrowsError(try HotlineChecks.load(path: file.path))
        try Data(#"[{"id":"optional_one","label_de":"Optional","label_en":"Optional","required":false}]"#.utf8).write(to: file)
        XCTAssertEqual(try HotlineChecks.load(path: file.path).requiredIDs, [])
    }
}
