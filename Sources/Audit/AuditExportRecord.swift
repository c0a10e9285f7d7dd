import Crypto
import Foundation
import TeleTAN

/// One audit entry as one line of the JSON Lines export, carrying what an outsider needs to
/// re-check the chain offline (docs: the design's export record):
///
///     {"seq":N,"time":"…Z","at_ms":N,"actor":S|null,"role":S|null,"action":S,"outcome":S,
///      "address":S|null,"request_id":S|null,"subject":S|null,"details":S,"prev_hash":S,"hash":S}
///
/// `details` is the stored JSON text as a string; `time` is informational, the hash uses `at_ms`.
package struct AuditExportRecord: Sendable, Equatable, Codable {
    package var seq: Int64
    package var atMilliseconds: Int64
    package var actor: String?
    package var role: String?
    package var action: String
    package var outcome: String
    package var address: String?
    package var requestID: String?
    package var subject: String?
    package var details: String
    package var previousHash: String
    package var hash: String

    package init(seq: Int64, atMilliseconds: Int64, actor: String?, role: String?, action: String, outcome: String,
                 address: String?, requestID: String?, subject: String?, details: String, previousHash: String, hash: String) {
        self.seq = seq
        self.atMilliseconds = atMilliseconds
        self.actor = actor
        self.role = role
        self.action = action
        self.outcome = outcome
        self.address = address
        self.requestID = requestID
        self.subject = subject
        self.details = details
        self.previousHash = previousHash
        self.hash = hash
    }

    package init(_ entry: AuditEntry) {
        self.init(seq: entry.id ?? -1, atMilliseconds: AuditChain.milliseconds(entry.occurredAt), actor: entry.actor, role: entry.role,
                  action: entry.action, outcome: entry.outcome, address: entry.address, requestID: entry.requestID,
                  subject: entry.subject, details: entry.details, previousHash: entry.previousHash, hash: entry.hash)
    }

    private enum CodingKeys: String, CodingKey {
        case seq, actor, role, action, outcome, address, subject, details, hash
        case atMilliseconds = "at_ms", requestID = "request_id", previousHash = "prev_hash"
    }

    /// The line, "\n" included, appended to `out` (reuse one buffer for a stream of rows).
    package func appendLine(to out: inout [UInt8]) {
        JSONText.appendRaw("{\"seq\":", to: &out); JSONText.appendInteger(seq, to: &out)
        JSONText.appendRaw(",\"time\":\"", to: &out); AuditTime.append(milliseconds: atMilliseconds, to: &out)
        JSONText.appendRaw("\",\"at_ms\":", to: &out); JSONText.appendInteger(atMilliseconds, to: &out)
        JSONText.appendRaw(",\"actor\":", to: &out); JSONText.appendOptionalString(actor, to: &out)
        JSONText.appendRaw(",\"role\":", to: &out); JSONText.appendOptionalString(role, to: &out)
        JSONText.appendRaw(",\"action\":", to: &out); JSONText.appendString(action, to: &out)
        JSONText.appendRaw(",\"outcome\":", to: &out); JSONText.appendString(outcome, to: &out)
        JSONText.appendRaw(",\"address\":", to: &out); JSONText.appendOptionalString(address, to: &out)
        JSONText.appendRaw(",\"request_id\":", to: &out); JSONText.appendOptionalString(requestID, to: &out)
        JSONText.appendRaw(",\"subject\":", to: &out); JSONText.appendOptionalString(subject, to: &out)
        JSONText.appendRaw(",\"details\":", to: &out); JSONText.appendString(details, to: &out)
        JSONText.appendRaw(",\"prev_hash\":", to: &out); JSONText.appendString(previousHash, to: &out)
        JSONText.appendRaw(",\"hash\":", to: &out); JSONText.appendString(hash, to: &out)
        JSONText.appendRaw("}\n", to: &out)
    }

    /// The line, "\n" included.
    package var line: String {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        appendLine(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    package struct DecodeError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Reads one line (with or without its "\n"). Absent optional fields count as null.
    package static func decode(line: some Collection<UInt8>) throws -> AuditExportRecord {
        do {
            return try JSONDecoder().decode(AuditExportRecord.self, from: Data(line))
        } catch {
            throw DecodeError(description: "not an audit export record (\(Self.reason(error)))")
        }
    }

    package static func decode(line: String) throws -> AuditExportRecord {
        try decode(line: Array(line.utf8))
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "field \(key.stringValue) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "field \(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
        default: "invalid JSON"
        }
    }

    /// The canonical JSON the chain hashes (sorted keys, nulls left out), built from the fields:
    /// the one implementation of the rule (the chain, the PostgreSQL append and the export check).
    package var canonicalJSON: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(384)
        appendCanonicalPrefix(to: &out)
        JSONText.appendInteger(seq, to: &out)
        appendCanonicalSuffix(to: &out)
        return out
    }

    /// The canonical JSON up to and including `"seq":` (the keys sorting before "seq").
    func appendCanonicalPrefix(to out: inout [UInt8]) {
        JSONText.appendRaw("{\"action\":", to: &out); JSONText.appendString(action, to: &out)
        if let actor { JSONText.appendRaw(",\"actor\":", to: &out); JSONText.appendString(actor, to: &out) }
        if let address { JSONText.appendRaw(",\"address\":", to: &out); JSONText.appendString(address, to: &out) }
        JSONText.appendRaw(",\"at_ms\":", to: &out); JSONText.appendInteger(atMilliseconds, to: &out)
        JSONText.appendRaw(",\"details\":", to: &out); JSONText.appendString(details, to: &out)
        JSONText.appendRaw(",\"outcome\":", to: &out); JSONText.appendString(outcome, to: &out)
        if let requestID { JSONText.appendRaw(",\"request_id\":", to: &out); JSONText.appendString(requestID, to: &out) }
        if let role { JSONText.appendRaw(",\"role\":", to: &out); JSONText.appendString(role, to: &out) }
        JSONText.appendRaw(",\"seq\":", to: &out)
    }

    /// The canonical JSON after the seq's digits (the keys sorting after "seq").
    func appendCanonicalSuffix(to out: inout [UInt8]) {
        if let subject { JSONText.appendRaw(",\"subject\":", to: &out); JSONText.appendString(subject, to: &out) }
        JSONText.appendRaw("}", to: &out)
    }

    /// SHA-256(prev_hash || "\n" || canonical JSON), lowercase hex: equals `hash` for an untouched entry.
    package var recomputedHash: String {
        var hasher = SHA256()
        hasher.update(data: Array(previousHash.utf8))
        hasher.update(data: [0x0A])
        hasher.update(data: canonicalJSON)
        return KeyedHasher.hex(hasher.finalize())
    }
}
