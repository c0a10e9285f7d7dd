import Crypto
import Foundation
import XCTest
@testable import TeleTAN

final class TeleTANTests: XCTestCase {
    /// The four vectors of the reference (shared/reference/verification-facts.md).
    func testCheckCharacterVectors() {
        XCTAssertEqual(TeleTAN.checkCharacter(for: "FE9A5MAK6"), "C")
        XCTAssertEqual(TeleTAN.checkCharacter(for: "WPHSATMHD"), "4")
        XCTAssertEqual(TeleTAN.checkCharacter(for: "FE9A5MAK9"), "H")
        XCTAssertEqual(TeleTAN.checkCharacter(for: "FE9A5MAKW"), "G")
        for full in ["FE9A5MAK6C", "WPHSATMHD4", "FE9A5MAK9H", "FE9A5MAKWG"] {
            XCTAssertEqual(TeleTAN(full)?.value, full)
        }
    }

    func testParsingIsCaseInsensitiveAndStrict() {
        XCTAssertEqual(TeleTAN(" fe9a5mak6c ")?.value, "FE9A5MAK6C")
        XCTAssertNil(TeleTAN("FE9A5MAK6D"), "wrong check character")
        XCTAssertNil(TeleTAN("FE9A5MAK6"), "too short")
        XCTAssertNil(TeleTAN("FE9A5MAK6CC"), "too long")
        for forbidden in ["0", "1", "I", "L", "O"] {
            let body = "FE9A5MAK" + forbidden
            XCTAssertNil(TeleTAN(body + String(TeleTAN.checkCharacter(for: body))), "\(forbidden) is not in the alphabet")
        }
        XCTAssertNil(TeleTAN("FE9A5 MAK6C"))
    }

    func testRandomTeleTANsAreValidAndUseTheWholeAlphabet() {
        var seen = Set<Character>()
        var values = Set<String>()
        for _ in 0..<2000 {
            let teleTAN = TeleTAN.random()
            XCTAssertNotNil(TeleTAN(teleTAN.value))
            XCTAssertEqual(teleTAN.value.count, 10)
            seen.formUnion(teleTAN.value.prefix(9))
            values.insert(teleTAN.value)
        }
        XCTAssertEqual(seen, Set(TeleTAN.alphabet))
        // The CWA alphabet itself: 31 characters, no 0, 1, I, L, O.
        XCTAssertEqual(String(TeleTAN.alphabet), "23456789ABCDEFGHJKMNPQRSTUVWXYZ")
        XCTAssertEqual(values.count, 2000, "2000 draws from 31^9 values should not collide")
    }

    func testGroupsAndRedactedDescription() {
        let teleTAN = TeleTAN("FE9A5MAK6C")!
        XCTAssertEqual(teleTAN.groups, ["FE9", "A5M", "AK6C"])
        XCTAssertEqual("\(teleTAN)", "TeleTAN(redacted)")
        XCTAssertFalse(String(describing: teleTAN).contains("FE9A5"))
    }

    func testValidity() {
        XCTAssertEqual(TeleTANType.test.validity, .seconds(3600))
        XCTAssertEqual(TeleTANType.event.validity, .seconds(172_800))
    }

    func testKeyedHashesDependOnKeyAndPurpose() {
        let key = SymmetricKey(size: .bits256)
        let hasher = KeyedHasher(key: key)
        let storage = hasher.hash("FE9A5MAK6C", for: .teleTANStorage)
        XCTAssertEqual(storage, hasher.hash("FE9A5MAK6C", for: .teleTANStorage))
        XCTAssertEqual(storage.count, 64)
        XCTAssertNotEqual(storage, hasher.hash("FE9A5MAK6C", for: .teleTANFingerprint))
        XCTAssertNotEqual(storage, KeyedHasher(key: SymmetricKey(size: .bits256)).hash("FE9A5MAK6C", for: .teleTANStorage))
        let plain = SHA256.hash(data: Data("FE9A5MAK6C".utf8)).map { String(format: "%02x", $0) }.joined()
        XCTAssertNotEqual(storage, plain)
        let expected = HMAC<SHA256>.authenticationCode(for: Data("teletan-storage\u{0}FE9A5MAK6C".utf8), using: key)
            .map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(storage, expected)
    }

    func testConstantTimeEquals() {
        XCTAssertTrue(KeyedHasher.constantTimeEquals("abc", "abc"))
        XCTAssertFalse(KeyedHasher.constantTimeEquals("abc", "abd"))
        XCTAssertFalse(KeyedHasher.constantTimeEquals("abc", "abcd"))
    }

    func testSecretFileIsCreatedPrivateAndRefusedWhenReadableByOthers() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("secret").path
        let key = try SecretFile.loadOrCreate(at: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let again = try SecretFile.loadOrCreate(at: path)
        XCTAssertEqual(key.withUnsafeBytes { Array($0) }, again.withUnsafeBytes { Array($0) })

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        XCTAssertThrowsError(try SecretFile.loadOrCreate(at: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        try Data("not hex".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try SecretFile.loadOrCreate(at: path))
    }
}
