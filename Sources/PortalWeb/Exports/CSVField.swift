/// One CSV field, written so that no spreadsheet runs any part of it as a formula. **Every CSV the
/// portal writes writes its fields through this one place**: the audit export (`AuditCSV`) today,
/// and any statistics or other export that comes later. Constant text (a header line) and values
/// of a fixed format without any of the characters below (numbers, `AuditTime`) may be written
/// directly.
///
/// RFC 4180 on its own is not enough. German-locale Excel and LibreOffice open a `.csv` with `;`
/// between cells, so `x;=1+1;` is three cells there, the middle one a formula; and a quote that
/// is not at its cell's start is plain text to them, so our quotes do not hold the value together
/// in that reading, and a line break inside a quoted value starts a new row. So a cell may begin
/// at the start of a value and after any `,`, `;`, tab, CR or LF in it, and after spaces (which a
/// reader may trim) or a quote (which opens a quoted cell there) at such a start. Wherever one
/// may begin with a formula trigger (`=`, `+`, `-`, `@`, tab, CR or NUL; OWASP's list), a `'`
/// is put in first: that cell is then text in every reading.
/// A field is quoted (RFC 4180, quotes doubled) when it holds a `,`, `;`, quote, CR or LF, or was
/// changed.
///
/// The CSV is for reading in a spreadsheet, not for verifying: the inserted `'` are not marked.
/// (The audit trail's JSON Lines export is exact.)
package enum CSVField {
    /// Appends `value` as one field (without a separator).
    package static func append(_ value: String, to out: inout [UInt8]) {
        let (bytes, changed) = disarmed(Array(value.utf8))
        let needsQuotes = changed || bytes.contains { quoteWorthy.contains($0) }
        guard needsQuotes else {
            out.append(contentsOf: bytes)
            return
        }
        out.append(quote)
        for byte in bytes {
            if byte == quote { out.append(byte) }
            out.append(byte)
        }
        out.append(quote)
    }

    /// The bytes of `value` with a `'` wherever a cell of some reading could begin with a
    /// formula trigger; and whether any was put in.
    static func disarmed(_ value: [UInt8]) -> (bytes: [UInt8], changed: Bool) {
        var result: [UInt8] = []
        result.reserveCapacity(value.count + 1)
        var changed = false
        var cellMayBegin = true
        for byte in value {
            if cellMayBegin, formulaTriggers.contains(byte) {
                result.append(apostrophe)
                changed = true
            }
            result.append(byte)
            // After a separator a cell begins; spaces (which a reader may trim) and a quote (which
            // opens a quoted cell there) at a cell's start leave it at the start.
            cellMayBegin = separators.contains(byte) || cellMayBegin && (byte == space || byte == quote)
        }
        return (result, changed)
    }

    private static let quote = UInt8(ascii: "\"")
    private static let apostrophe = UInt8(ascii: "'")
    private static let space = UInt8(ascii: " ")
    /// After these a cell begins in some reading of the file (`,` RFC 4180; `;` German-locale
    /// spreadsheets; tab a tab-separated reading; CR and LF a reading that ignores our quotes).
    private static let separators: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: ";"), 0x09, 0x0D, 0x0A]
    /// A cell starting with one of these is a formula to some spreadsheet (tab, CR and NUL: one
    /// that trims them first).
    private static let formulaTriggers: Set<UInt8> = [
        UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D, 0x00,
    ]
    private static let quoteWorthy: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\""), 0x0D, 0x0A]
}
