import Foundation

/// The canonical form of an entry and the chain hash over it.
///
/// hash = SHA-256( previous hash (hex) || "\n" || canonical JSON ), where the canonical JSON has
/// sorted keys and the time in whole milliseconds (what both databases store exactly).
enum AuditChain {
    static let genesisHash = String(repeating: "0", count: 64)

    /// SHA-256(previous || "\n" || canonical JSON) of `entry` at its seq (`entry.id`), with the
    /// canonical JSON of ``AuditExportRecord/canonicalJSON`` (the one implementation of the rule).
    static func hash(of entry: AuditEntry, previous: String) -> String {
        canonicalRecord(of: entry, seq: entry.id ?? -1, previous: previous).recomputedHash
    }

    /// The canonical JSON with `seq` left out: `prefix + String(seq) + suffix` is exactly what
    /// ``hash(of:previous:)`` hashes. PostgreSQL uses it to append in one statement, with the
    /// sequence number and previous hash it reads under the head lock (see ``AuditLog``).
    static func canonicalParts(of entry: AuditEntry) -> (prefix: String, suffix: String) {
        let record = canonicalRecord(of: entry, seq: 0, previous: "")
        var prefix: [UInt8] = [], suffix: [UInt8] = []
        record.appendCanonicalPrefix(to: &prefix)
        record.appendCanonicalSuffix(to: &suffix)
        return (String(decoding: prefix, as: UTF8.self), String(decoding: suffix, as: UTF8.self))
    }

    /// The hashed fields of `entry` (not its stored prev_hash and hash, which a new entry lacks).
    private static func canonicalRecord(of entry: AuditEntry, seq: Int64, previous: String) -> AuditExportRecord {
        AuditExportRecord(seq: seq, atMilliseconds: milliseconds(entry.occurredAt), actor: entry.actor, role: entry.role,
                          action: entry.action, outcome: entry.outcome, address: entry.address, requestID: entry.requestID,
                          subject: entry.subject, details: entry.details, previousHash: previous, hash: "")
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
