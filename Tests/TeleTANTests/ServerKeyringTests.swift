import Crypto
import Foundation
import XCTest
@testable import TeleTAN

/// Key ids for the server secret (issue 21, item 7): today's single-secret file is key 1, a
/// rotation adds a key that hashes and seals new data while older keys still find and open theirs,
/// running instances pick the change up from the file, and retiring is refused within retention.
final class ServerKeyringTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let day: TimeInterval = 86400

    private func secretFile() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyring-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("portal.secret").path
    }

    /// A clock the test moves.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var time: Date
        init(_ time: Date) { self.time = time }
        var now: Date { lock.withLock { time } }
        func advance(_ seconds: TimeInterval) { lock.withLock { time = time.addingTimeInterval(seconds) } }
    }

    func testTodaysSingleSecretFileIsKeyOneAndHashesAndSealsAsBefore() throws {
        let path = try secretFile()
        let secret = try SecretFile.loadOrCreate(at: path)  // what every install has today
        let keyring = try ServerKeyring(path: path)
        XCTAssertEqual(keyring.keys.keys.map(\.id), [1])
        // The same hashes as a hasher with the bare secret (the stored ones of existing installs).
        XCTAssertEqual(KeyedHasher(keyring: keyring).hash("FE9A5MAK6C", for: .teleTANStorage),
                       KeyedHasher.hash("FE9A5MAK6C", for: .teleTANStorage, key: secret))
        // Key 1 seals without a prefix, as the release before did, so it can still read them.
        let sealed = try Sealer(keyring: keyring, purpose: "p").seal("waiting", boundTo: "row")
        XCTAssertNil(sealed.firstIndex(of: ":"), sealed)
        XCTAssertEqual(Sealer(serverSecret: secret, purpose: "p").open(String.self, from: sealed, boundTo: "row"), "waiting")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, 0o600)
    }

    func testARotationHashesAndSealsWithTheNewKeyAndStillFindsAndOpensTheOld() throws {
        let path = try secretFile()
        let clock = Clock(start)
        let keyring = try ServerKeyring(path: path, now: { clock.now })
        let hasher = KeyedHasher(keyring: keyring)
        let sealer = Sealer(keyring: keyring, purpose: "pending-display")
        let oldHash = hasher.hash("FE9A5MAK6C", for: .teleTANStorage)
        let oldSealed = try sealer.seal("old", boundTo: "row")

        let key = try KeyRotation.rotate(path: path, now: clock.now, takeOverAfter: 60)
        XCTAssertEqual(key.id, 2)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int, 0o600)
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).contains(key.secret.withUnsafeBytes { KeyedHasher.hex($0) }))

        // Within 10 s the running instance has read the new file; key 2 takes over after 60 s.
        clock.advance(11)
        XCTAssertEqual(keyring.live().map(\.id), [1, 2], "announced, not yet current")
        XCTAssertEqual(hasher.hash("FE9A5MAK6C", for: .teleTANStorage), oldHash)
        clock.advance(60)
        XCTAssertEqual(keyring.current().id, 2)
        let newHash = hasher.hash("FE9A5MAK6C", for: .teleTANStorage)
        XCTAssertNotEqual(newHash, oldHash)
        XCTAssertEqual(hasher.hashes("FE9A5MAK6C", for: .teleTANStorage), [newHash, oldHash], "lookups try every live key")
        XCTAssertTrue(hasher.matches(oldHash, "FE9A5MAK6C", for: .teleTANStorage))
        let newSealed = try sealer.seal("new", boundTo: "row")
        XCTAssertTrue(newSealed.hasPrefix("k2:"), newSealed)
        XCTAssertEqual(sealer.open(String.self, from: oldSealed, boundTo: "row"), "old")
        XCTAssertEqual(sealer.open(String.self, from: newSealed, boundTo: "row"), "new")

        // Another instance that has not re-read the file yet opens key 2's data at once.
        let other = try ServerKeyring(path: path, now: { clock.now })
        XCTAssertEqual(Sealer(keyring: other, purpose: "pending-display").open(String.self, from: newSealed, boundTo: "row"), "new")
    }

    func testRetiringIsRefusedWithinRetentionAndThenRefusesTheOldData() throws {
        let path = try secretFile()
        let clock = Clock(start)
        let keyring = try ServerKeyring(path: path, now: { clock.now })
        let hasher = KeyedHasher(keyring: keyring)
        let sealer = Sealer(keyring: keyring, purpose: "hotline-contact")
        let oldHash = hasher.hash("session-id", for: .session)
        let oldSealed = try sealer.seal("contact", boundTo: "row")
        try KeyRotation.rotate(path: path, now: clock.now, takeOverAfter: 0)
        let retention = KeyRotation.longestRetention(auditRetention: .seconds(400 * 86400))
        XCTAssertEqual(retention, 400 * day)
        XCTAssertEqual(KeyRotation.longestRetention(auditRetention: .seconds(86400)), 21 * day, "the verification server's 21 days at least")

        XCTAssertThrowsError(try KeyRotation.retire(id: 2, path: path, now: clock.now, retention: retention, force: false)) {
            XCTAssertTrue("\($0)".contains("current key"), "\($0)")
        }
        XCTAssertThrowsError(try KeyRotation.retire(id: 1, path: path, now: clock.now.addingTimeInterval(399 * day), retention: retention, force: false)) {
            XCTAssertTrue("\($0)".contains("may still be needed until"), "\($0)")
        }
        XCTAssertThrowsError(try KeyRotation.retire(id: 7, path: path, now: clock.now, retention: retention, force: false))
        try KeyRotation.retire(id: 1, path: path, now: clock.now.addingTimeInterval(401 * day), retention: retention, force: false)
        XCTAssertEqual(try ServerKeyring.read(path).keys.map(\.id), [2])

        clock.advance(11)
        XCTAssertEqual(keyring.live().map(\.id), [2])
        XCTAssertFalse(hasher.matches(oldHash, "session-id", for: .session), "old data is no longer found")
        XCTAssertNil(sealer.open(String.self, from: oldSealed, boundTo: "row"), "nor opened")
    }

    func testAForcedRetirementAndAMalformedKeyring() throws {
        let path = try secretFile()
        _ = try ServerKeyring(path: path)
        try KeyRotation.rotate(path: path, now: start, takeOverAfter: 0)
        try KeyRotation.retire(id: 1, path: path, now: start, retention: 400 * day, force: true)
        XCTAssertEqual(try ServerKeyring.read(path).keys.map(\.id), [2])

        try "2 abc 2027-01-01T00:00:00Z\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        XCTAssertThrowsError(try ServerKeyring.read(path)) {
            XCTAssertTrue("\($0)".contains("KEY-ID HEX CURRENT-FROM"), "\($0)")
        }
        XCTAssertNil(Sealer.keyID(of: "kx:AAAA"))
        XCTAssertEqual(Sealer.keyID(of: "k3:AAAA"), 3)
        XCTAssertEqual(Sealer.keyID(of: "kAAA+/="), 1, "base64 that starts with k is key 1's")
    }
}
