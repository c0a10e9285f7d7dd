/// UTC ISO 8601 with milliseconds ("2026-11-24T10:00:00.123Z") from and to milliseconds since
/// 1970, by arithmetic: the export writes one per row, where a date formatter per row would cost
/// more than the rest of the line. (Days-to-civil after Howard Hinnant's `civil_from_days`.)
package enum AuditTime {
    package static func iso8601(milliseconds ms: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(milliseconds: ms, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    package static func append(milliseconds ms: Int64, to out: inout [UInt8]) {
        let days = floorDiv(ms, 86_400_000)
        let msOfDay = ms - days * 86_400_000
        let (year, month, day) = civil(fromDays: days)
        digits(year, 4, &out); out.append(0x2D); digits(month, 2, &out); out.append(0x2D); digits(day, 2, &out)
        out.append(0x54)
        digits(msOfDay / 3_600_000, 2, &out); out.append(0x3A)
        digits(msOfDay / 60_000 % 60, 2, &out); out.append(0x3A)
        digits(msOfDay / 1000 % 60, 2, &out); out.append(0x2E)
        digits(msOfDay % 1000, 3, &out); out.append(0x5A)
    }

    /// The inverse, for exactly the form above; nil for anything else.
    static func milliseconds(iso8601 text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count == 24, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x2E, b[23] == 0x5A else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for i in range {
                guard (0x30...0x39).contains(b[i]) else { return nil }
                value = value * 10 + Int64(b[i] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19), let milli = number(20..<23),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        guard civil(fromDays: days) == (year, month, day) else { return nil }  // 31 February
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + milli
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    private static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func days(fromCivil y0: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? y0 - 1 : y0
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func digits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(0x30 + rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
