import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `portal secret rotate` and `retire`: changes to the keyring file, each written to a temporary
/// file (mode 600) and renamed over it, so a running instance reads the old or the new keyring,
/// never half of one.
package enum KeyRotation {
    package struct Refusal: Error, CustomStringConvertible {
        package let description: String
    }

    /// Data made with a key lives at most this long after the next key took over: the longest
    /// retention of anything hashed or sealed with the server secret. That is the audit trail's
    /// (`--audit-retention`: fingerprints of teleTANs, callers' numbers and names, kept for the
    /// admin lookup); the verification server keeps its rows 21 days, sessions live 8 hours,
    /// waiting teleTANs and callbacks minutes to an hour.
    package static func longestRetention(auditRetention: Duration) -> TimeInterval {
        max(Double(auditRetention.components.seconds), 21 * 86400)
    }

    /// Adds a new key, current from `now + takeOverAfter`, and returns it.
    @discardableResult
    package static func rotate(path: String, now: Date, takeOverAfter: TimeInterval) throws -> ServerKey {
        let keys = try ServerKeyring.read(path)
        let newest = keys.keys.last!
        let from = max(now.addingTimeInterval(takeOverAfter), newest.currentFrom)
        // Whole seconds: the file keeps ISO 8601 times without fractions.
        let key = ServerKey(id: newest.id + 1, secret: SymmetricKey(size: .bits256), currentFrom: Date(timeIntervalSince1970: from.timeIntervalSince1970.rounded(.down)))
        try store(ServerKeys(keys: keys.keys + [key]), to: path)
        return key
    }

    /// Removes key `id`. Refused for the current key or a newer one, and while data made with it
    /// may still exist: until the key after it has been current for `retention`, unless `force`
    /// (a key that leaked; what it made is then refused as unknown).
    package static func retire(id: Int, path: String, now: Date, retention: TimeInterval, force: Bool) throws {
        let keys = try ServerKeyring.read(path)
        guard keys.key(id: id) != nil else {
            throw Refusal(description: "there is no key \(id) in \(path) (keys: \(keys.keys.map { String($0.id) }.joined(separator: ", ")))")
        }
        let current = keys.current(at: now)
        guard id < current.id else {
            throw Refusal(description: "key \(id) is the current key or not current yet; rotate first, then retire the old key")
        }
        // The first key after it to take over: from then on no new data was made with key `id`.
        let successor = keys.keys.first { $0.id > id }!
        let safeFrom = successor.currentFrom.addingTimeInterval(retention)
        if !force, safeFrom > now {
            throw Refusal(description: "key \(id) may still be needed until \(safeFrom.formatted(.iso8601)): data made with it is kept up to \(Int(retention / 86400)) days (the audit retention); pass --force only for a key that leaked")
        }
        try store(ServerKeys(keys: keys.keys.filter { $0.id != id }), to: path)
    }

    static func store(_ keys: ServerKeys, to path: String) throws {
        do {
            try AtomicFile.write(Data(keys.text().utf8), to: path, mode: 0o600)
        } catch let error as AtomicFile.Failure {
            throw Refusal(description: error.description)
        }
    }
}
