import Audit
import PortalWeb

/// The CSV export: RFC 4180 (CRLF between records, quotes doubled), every field written by
/// ``CSVField``, the one guard every CSV of the portal goes through, so that no cell is a formula
/// in any spreadsheet's reading (German-locale Excel's `;` included). `seq` and the time have
/// fixed formats and are written as they are.
package enum AuditCSV {
    package static let header = "seq,time_utc,actor,role,action,outcome,address,request_id,subject,details,prev_hash,hash\r\n"

    package static func write(_ row: AuditRow, into out: inout [UInt8]) {
        out.append(contentsOf: String(row.seq).utf8)
        out.append(UInt8(ascii: ","))
        AuditTime.append(milliseconds: row.milliseconds, to: &out)
        for value in [row.actor, row.role, row.action, row.outcome, row.address, row.request_id, row.subject, row.details, row.prev_hash, row.hash] {
            out.append(UInt8(ascii: ","))
            CSVField.append(value ?? "", to: &out)
        }
        out.append(0x0D)
        out.append(0x0A)
    }
}
