/// JSON string escaping exactly as the chain rule has it (Swift's JSONEncoder with
/// `.withoutEscapingSlashes`, Python's `json.dumps(..., ensure_ascii=False)`): `\" \\ \b \f \n
/// \r \t`, other U+0000...U+001F as `\u00xx` (lowercase hex), everything else raw UTF-8. Written
/// by hand because the export encodes a million rows and an encoder per row is the slow part.
enum JSONText {
    private static let hex = Array("0123456789abcdef".utf8)

    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(0x22)
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                out.append(0x5C)
                switch byte {
                case 0x22: out.append(0x22)
                case 0x5C: out.append(0x5C)
                case 0x08: out.append(0x62)
                case 0x0C: out.append(0x66)
                case 0x0A: out.append(0x6E)
                case 0x0D: out.append(0x72)
                case 0x09: out.append(0x74)
                default: out.append(contentsOf: [0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
        }
        out.append(0x22)
    }

    static func appendOptionalString(_ text: String?, to out: inout [UInt8]) {
        if let text { appendString(text, to: &out) } else { out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) }
    }

    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        out.append(contentsOf: String(value).utf8)
    }

    static func appendRaw(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }
}
