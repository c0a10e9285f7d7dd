import Crypto
import Foundation

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
        let canonical = Canonical(
            seq: entry.id ?? -1, at_ms: milliseconds(entry.occurredAt), actor: entry.actor, role: entry.role,
            action: entry.action, outcome: entry.outcome, address: entry.address, request_id: entry.requestID,
            subject: entry.subject, details: entry.details
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(canonical)) ?? Data()
        var hasher = SHA256()
        hasher.update(data: Array(previous.utf8))
        hasher.update(data: [0x0A])
        hasher.update(data: json)
        return hex(hasher.finalize())
    }

    /// Lower-case hex (`String(format:)` per byte was a visible cost on every append).
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
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
