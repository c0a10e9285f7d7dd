/// A caller's phone number, normalised to E.164 (`+4930123456`). Accepts what people type: spaces,
/// `/`, `-`, `.`, brackets, a leading `00` for `+`, and a national number starting with `0`
/// (taken as German, the hotline's country).
package struct PhoneNumber: Sendable, Equatable {
    /// `+` and 7 to 15 digits, the first not 0.
    package let e164: String

    package init?(_ input: String) {
        var text = input.trimmingCharacters(in: .whitespaces)
        guard text.count <= 40 else { return nil }
        // "+49 (0)30 …": the bracketed trunk zero is dialled only within the country.
        text = text.replacingOccurrences(of: "(0)", with: "")
        text.removeAll { " /-.()\u{00A0}".contains($0) }
        if text.hasPrefix("00") {
            text = "+" + text.dropFirst(2)
        } else if text.hasPrefix("0") {
            text = "+49" + text.dropFirst()
        }
        guard text.hasPrefix("+") else { return nil }
        let digits = text.dropFirst()
        guard (7...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0" else { return nil }
        e164 = text
    }

    /// What anyone in the queue may see: the country prefix's first digits and the last two.
    /// `+49 ••• ••• •• 67`.
    package var masked: String {
        let digits = Array(e164.dropFirst())
        return "+\(String(digits.prefix(2))) ••• ••• •• \(String(digits.suffix(2)))"
    }

    /// Grouped for reading: `+49 301 234 5678`.
    package var readable: String {
        let digits = Array(e164.dropFirst())
        var groups: [String] = [String(digits.prefix(2))]
        var rest = digits.dropFirst(2)
        while !rest.isEmpty {
            let take = rest.count == 4 ? 4 : min(3, rest.count)
            groups.append(String(rest.prefix(take)))
            rest = rest.dropFirst(take)
        }
        return "+" + groups.joined(separator: " ")
    }
}

import Foundation

/// A caller's name as typed for the callback: 1 to 100 characters, no control characters.
package enum PersonName {
    package static func validated(_ input: String) -> String? {
        let name = input.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(name.count),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format })
        else { return nil }
        return name
    }
}
