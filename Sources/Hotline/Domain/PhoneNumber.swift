import Foundation

/// A caller's phone number: valid by Google libphonenumber's metadata (its region, type and
/// format; see PhoneNumberMetadata), normalised to E.164 (`+49301234567`).
///
/// Accepts what people type: spaces, `/`, `-`, `.`, brackets, `+` or a leading `00` before the
/// country code, and a national number starting with `0` (taken as German, the hotline's
/// country). "+49 (0)30 …" works because, as libphonenumber does, a national prefix after the
/// country code is dropped. Parsing follows libphonenumber's `parse(input, "DE")` and
/// `isValidNumber` step by step; Tests/fixtures/phone-numbers.tsv, generated from it, checks that.
package struct PhoneNumber: Sendable, Equatable {
    /// `+`, the country code and the national significant number.
    package let e164: String
    package let countryCode: Int
    /// The national significant number (without national prefix): `301234567`.
    package let nationalNumber: String
    /// ISO 3166 code (`DE`), or `001` for a non-geographic number such as +800.
    package let region: String
    package let type: PhoneNumberType

    package init?(_ input: String) {
        self.init(input, metadata: .shared)
    }

    init?(_ input: String, metadata: PhoneNumberMetadata) {
        let text = input.trimmingCharacters(in: .whitespaces)
        guard text.count <= 40 else { return nil }
        var digits = ""
        var plus = false
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
            } else if character == "+", digits.isEmpty, !plus {
                plus = true
            } else if !(" /-.()".contains(character) || character.isWhitespace) {
                return nil
            }
        }
        let code: Int
        var national: String
        if plus || digits.hasPrefix("00") {
            // International: the country code follows `+` or `00` (Germany's international prefix).
            let international = plus ? digits : String(digits.dropFirst(2))
            guard international.count > 2, let found = metadata.countryCode(atStartOf: international) else { return nil }
            code = found
            national = String(international.dropFirst(String(found).count))
        } else if digits.hasPrefix("0") {
            code = 49
            national = digits
        } else {
            return nil
        }
        guard national.count >= 2, let regions = metadata.regionsByCountryCode[code], let main = regions.first else { return nil }
        // The national prefix (Germany's 0), where dropping it leaves a number of a possible length.
        if let stripped = Self.strippingNationalPrefix(national, main) {
            switch Self.testLength(stripped, main) {
            case .tooShort, .localOnly, .invalid: break
            case .possible, .tooLong: national = stripped
            }
        }
        guard (2...17).contains(national.count) else { return nil }
        // A shared country code (+1, +7, +44): the region whose leading digits or patterns fit.
        let region = regions.count == 1 ? main : regions.first { region in
            if let leading = region.leadingDigits { return leading.matchAtStart(national) != nil }
            return Self.type(of: national, in: region) != nil
        }
        guard let region, let type = Self.type(of: national, in: region) else { return nil }
        self.countryCode = code
        self.nationalNumber = national
        self.region = region.id
        self.type = type
        e164 = "+\(code)\(national)"
    }

    package static func == (lhs: PhoneNumber, rhs: PhoneNumber) -> Bool { lhs.e164 == rhs.e164 }

    /// What anyone in the queue may see: the country code and the last two digits, nothing else;
    /// always eight bullets, so neither the area code nor the number's length shows.
    /// `+49 ••• ••• •• 67`, `+1 ••• ••• •• 23`.
    package var masked: String {
        "+\(countryCode) ••• ••• •• \(nationalNumber.suffix(2))"
    }

    /// Grouped as libphonenumber's international format: `+49 30 1234567`, `+1 202-555-0123`.
    package var readable: String {
        let metadata = PhoneNumberMetadata.shared
        guard let main = metadata.regionsByCountryCode[countryCode]?.first else { return e164 }
        return "+\(countryCode) \(Self.formatted(nationalNumber, main))"
    }

    // MARK: - libphonenumber's steps

    /// `maybeStripNationalPrefixAndCarrierCode`: nil when nothing is stripped.
    private static func strippingNationalPrefix(_ number: String, _ region: PhoneNumberMetadata.Region) -> String? {
        guard let prefix = region.nationalPrefixForParsing, let match = prefix.matchAtStart(number) else { return nil }
        let viable = region.general.pattern.matchesWhole(number)
        let whole = number as NSString
        let lastGroup = match.numberOfRanges - 1
        let result: String
        if let transform = region.nationalPrefixTransform, lastGroup > 0, match.range(at: lastGroup).location != NSNotFound {
            let replacement = prefix.regex.replacementString(for: match, in: number, offset: 0, template: transform)
            result = replacement + whole.substring(from: match.range.upperBound)
        } else {
            result = whole.substring(from: match.range.upperBound)
        }
        // A number that was viable stays as it is unless stripping keeps it viable.
        if viable, !region.general.pattern.matchesWhole(result) { return nil }
        return result
    }

    private enum Length { case possible, localOnly, tooShort, tooLong, invalid }

    /// `testNumberLength` against the region's general description.
    private static func testLength(_ number: String, _ region: PhoneNumberMetadata.Region) -> Length {
        let possible = region.general.lengths
        guard let shortest = possible.first, let longest = possible.last, shortest != -1 else { return .invalid }
        let length = number.count
        if region.general.localOnlyLengths.contains(length) { return .localOnly }
        if length == shortest { return .possible }
        if length < shortest { return .tooShort }
        if length > longest { return .tooLong }
        return possible.dropFirst().contains(length) ? .possible : .invalid
    }

    /// `getNumberTypeHelper`; nil for UNKNOWN.
    static func type(of number: String, in region: PhoneNumberMetadata.Region) -> PhoneNumberType? {
        guard region.general.matches(number) else { return nil }
        var mobile: PhoneNumberMetadata.Description?
        for (type, description) in region.types {
            switch type {
            case .fixedLine:
                guard description.matches(number) else { continue }
                if region.sameMobileAndFixedLinePattern { return .fixedLineOrMobile }
                let mobile = region.types.first { $0.0 == .mobile }?.1
                return mobile?.matches(number) == true ? .fixedLineOrMobile : .fixedLine
            case .mobile:
                mobile = description
            default:
                if description.matches(number) { return type }
            }
        }
        if !region.sameMobileAndFixedLinePattern, mobile?.matches(number) == true { return .mobile }
        return nil
    }

    /// `formatNsn` in the international format: the first format whose leading digits and
    /// pattern fit, applied as Python's `re.sub` does; the bare digits when none fits.
    private static func formatted(_ number: String, _ region: PhoneNumberMetadata.Region) -> String {
        let whole = NSRange(number.startIndex..., in: number)
        for format in region.formats {
            if let leading = format.leadingDigits, leading.matchAtStart(number) == nil { continue }
            guard format.pattern.matchesWhole(number) else { continue }
            return format.pattern.regex.stringByReplacingMatches(in: number, range: whole, withTemplate: format.template)
        }
        return number
    }
}
