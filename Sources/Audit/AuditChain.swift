import Crypto
import Foundation
import TeleTAN

/// The canonical form of an entry and the chain hash over it.
///
/// hash = SHA-256( previous hash (hex) || "\n" || canonical JSON ), where the canonical JSON has
/// sorted keys and the time in whole milliseconds (what both databases store exactly).
enum AuditChain {
    static let genesisHash = String(repeating: "0", count: 64)

    private struct Canonical: Encodable {
        let seq: Int64
        let at_ms: Int64
        let actor: String?
        let role: String?
        let action: String
        let outcome: String
        let address: String?
        let request_id: String?
        let subject: String?
        let details: String
    }

    static func hash(of entry: AuditEntry, previous: String) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(previous.utf8))
        hasher.update(data: [0x0A])
        hasher.update(data: Array(canonicalJSON(of: entry, seq: entry.id ?? -1).utf8))
        return KeyedHasher.hex(hasher.finalize())
    }

    /// The canonical JSON with `seq` left out: `prefix + String(seq) + suffix` is exactly what
    /// ``hash(of:previous:)`` hashes. PostgreSQL uses it to append in one statement, with the
    /// sequence number and previous hash it reads under the head lock (see ``AuditLog``).
    static func canonicalParts(of entry: AuditEntry) -> (prefix: String, suffix: String)? {
        // A number no entry has; inside a JSON string `"seq":` would be escaped, so the marker
        // can only be the seq field itself.
        let sentinel: Int64 = -7_777_777_777_777_777
        let parts = canonicalJSON(of: entry, seq: sentinel).components(separatedBy: "\"seq\":\(sentinel)")
        guard parts.count == 2 else { return nil }
        return (parts[0] + "\"seq\":", parts[1])
    }

    private static func canonicalJSON(of entry: AuditEntry, seq: Int64) -> String {
        let canonical = Canonical(
            seq: seq, at_ms: milliseconds(entry.occurredAt), actor: entry.actor, role: entry.role,
            action: entry.action, outcome: entry.outcome, address: entry.address, request_id: entry.requestID,
            subject: entry.subject, details: entry.details
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(canonical)) ?? Data(), as: UTF8.self)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Drops sub-millisecond precision so the stored time and the hashed time are the same.
    static func truncatedToMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds(date)) / 1000)
    }

    static func encodeDetails(_ details: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(details)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
