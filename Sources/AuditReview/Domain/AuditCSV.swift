import Audit
import Foundation
import NIOCore

/// The CSV export: RFC 4180 (CRLF between records, a field with a comma, quote, CR or LF in
/// quotes, quotes doubled), and a cell that a spreadsheet would run as a formula (starting with
/// `=`, `+`, `-`, `@`, tab, CR or NUL) prefixed with `'` (OWASP's advice).
package enum AuditCSV {
    package static let header = "seq,time_utc,actor,role,action,outcome,address,request_id,subject,details,prev_hash,hash\r\n"

    package static func write(_ row: AuditRow, into out: inout [UInt8]) {
        field(String(row.seq), into: &out)
        out.append(UInt8(ascii: ","))
        AuditTime.append(milliseconds: row.milliseconds, to: &out)
        for value in [row.actor, row.role, row.action, row.outcome, row.address, row.request_id, row.subject, row.details, row.prev_hash, row.hash] {
            out.append(UInt8(ascii: ","))
            field(value ?? "", into: &out)
        }
        out.append(0x0D)
        out.append(0x0A)
    }

    private static let risky: Set<UInt8> = [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D, 0x00]

    private static func field(_ value: String, into out: inout [UInt8]) {
        let utf8 = value.utf8
        let disarm = utf8.first.map { risky.contains($0) } ?? false
        let needsQuotes = disarm || utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0D || $0 == 0x0A }
        guard needsQuotes else {
            out.append(contentsOf: utf8)
            return
        }
        out.append(UInt8(ascii: "\""))
        if disarm { out.append(UInt8(ascii: "'")) }
        for byte in utf8 {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}
