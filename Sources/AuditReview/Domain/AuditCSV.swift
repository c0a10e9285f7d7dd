import Audit
import Foundation
import NIOCore

/// The CSV export: RFC 4180 (CRLF between records, a field with a comma, quote, CR or LF in
/// quotes, quotes doubled), and a cell that a spreadsheet would run as a formula (starting with
/// `=`, `+`, `-`, `@`, tab, CR or NUL) prefixed with `'` (OWASP's advice).
package enum AuditCSV {
    package static let header = "seq,time_utc,actor,role,action,outcome,address,request_id,subject,details,prev_hash,hash\r\n"

    package static func write(_ row: AuditRow, into buffer: inout ByteBuffer) {
        field(String(row.seq), into: &buffer)
        buffer.writeInteger(UInt8(ascii: ","))
        field(AuditExportTime.utc(row.occurred_at), into: &buffer)
        for value in [row.actor, row.role, row.action, row.outcome, row.address, row.request_id, row.subject, row.details, row.prev_hash, row.hash] {
            buffer.writeInteger(UInt8(ascii: ","))
            field(value ?? "", into: &buffer)
        }
        buffer.writeString("\r\n")
    }

    /// One cell, neutralised and quoted as needed.
    package static func cell(_ value: String) -> String {
        var buffer = ByteBuffer()
        field(value, into: &buffer)
        return String(buffer: buffer)
    }

    private static func field(_ value: String, into buffer: inout ByteBuffer) {
        let utf8 = value.utf8
        let risky = utf8.first.map { [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D, 0x00].contains($0) } ?? false
        let needsQuotes = risky || utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0D || $0 == 0x0A }
        guard needsQuotes else {
            buffer.writeString(value)
            return
        }
        buffer.writeInteger(UInt8(ascii: "\""))
        if risky { buffer.writeInteger(UInt8(ascii: "'")) }
        for byte in utf8 {
            if byte == UInt8(ascii: "\"") { buffer.writeInteger(byte) }
            buffer.writeInteger(byte)
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}

/// Times in exports: UTC, ISO 8601 with milliseconds (what the chain hashes, as `at_ms`).
package enum AuditExportTime {
    package static func utc(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
    }
}

extension AuditRow {
    /// The row as the audit module's entry type (which the JSON Lines encoder takes).
    var exportEntry: AuditEntry {
        let entry = AuditEntry()
        entry.id = seq
        entry.occurredAt = occurred_at
        entry.actor = actor
        entry.role = role
        entry.action = action
        entry.outcome = outcome
        entry.address = address
        entry.requestID = request_id
        entry.subject = subject
        entry.details = details
        entry.previousHash = prev_hash
        entry.hash = hash
        return entry
    }
}
