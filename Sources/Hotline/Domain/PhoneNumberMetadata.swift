import Foundation

/// What a phone number is, in libphonenumber's words (its `PhoneNumberType`, without UNKNOWN:
/// a number of no known type is not a valid number). The raw values are the names
/// `--callback-numbers` and the test fixture use.
package enum PhoneNumberType: String, Sendable, CaseIterable {
    case fixedLine = "fixed-line"
    case mobile
    /// Where the number plan does not tell fixed-line from mobile numbers (the US, for example).
    case fixedLineOrMobile = "fixed-line-or-mobile"
    case tollFree = "toll-free"
    case premiumRate = "premium-rate"
    case sharedCost = "shared-cost"
    case personal
    case voip
    case pager
    /// "Universal access number", e.g. a company's single number.
    case uan
    case voicemail
}

/// Google libphonenumber's metadata (Apache 2.0), as `PhoneNumberMetadata.generated.swift`
/// carries it: read once, on first use; each pattern is compiled on its first use only (a few
/// dozen of the thousands are ever needed).
struct PhoneNumberMetadata: Sendable {
    struct Description: Sendable {
        let pattern: LazyPattern
        /// Sorted; empty means "as the general description".
        let lengths: [Int]
        let localOnlyLengths: [Int]

        /// libphonenumber's `isNumberMatchingDesc`.
        func matches(_ number: String) -> Bool {
            if !lengths.isEmpty, !lengths.contains(number.count) { return false }
            return pattern.matchesWhole(number)
        }
    }

    struct Format: Sendable {
        let pattern: LazyPattern
        let template: String
        let leadingDigits: LazyPattern?
    }

    struct Region: Sendable {
        /// ISO 3166 code, or `001` for a non-geographic entity (+800, +882, ...).
        let id: String
        let countryCode: Int
        let nationalPrefixForParsing: LazyPattern?
        let nationalPrefixTransform: String?
        let leadingDigits: LazyPattern?
        let sameMobileAndFixedLinePattern: Bool
        var general = Description(pattern: LazyPattern(""), lengths: [], localOnlyLengths: [])
        /// In libphonenumber's order of precedence: premium rate first, fixed line and mobile last.
        var types: [(PhoneNumberType, Description)] = []
        /// International formats; only the main region of a country code has them.
        var formats: [Format] = []
    }

    /// Main region first (the US for +1, Russia for +7, the UK for +44).
    let regionsByCountryCode: [Int: [Region]]
    /// Geographic regions by their ISO code.
    let regionsByID: [String: Region]

    static let shared = PhoneNumberMetadata(source)

    init(_ text: String) {
        var regions: [Region] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func pattern(_ index: Int) -> LazyPattern? { fields[index].isEmpty ? nil : LazyPattern(fields[index]) }
            func lengths(_ index: Int) -> [Int] { fields[index].split(separator: ",").compactMap { Int($0) }.sorted() }
            switch fields[0] {
            case "R":
                // Its descriptions and formats follow on the next lines.
                regions.append(Region(
                    id: fields[1], countryCode: Int(fields[2]) ?? 0, nationalPrefixForParsing: pattern(4),
                    nationalPrefixTransform: fields[5].isEmpty ? nil : fields[5], leadingDigits: pattern(6),
                    sameMobileAndFixedLinePattern: fields[7] == "1"))
            case "D":
                let description = Description(pattern: LazyPattern(fields[2]), lengths: lengths(3), localOnlyLengths: lengths(4))
                guard let last = regions.indices.last else { continue }
                if fields[1] == "general" {
                    regions[last].general = description
                } else if let type = PhoneNumberType(rawValue: fields[1]) {
                    regions[last].types.append((type, description))
                }
            case "F":
                guard let last = regions.indices.last else { continue }
                regions[last].formats.append(Format(pattern: LazyPattern(fields[1]), template: fields[2], leadingDigits: pattern(3)))
            default:
                continue
            }
        }
        regionsByCountryCode = Dictionary(grouping: regions, by: \.countryCode)
        regionsByID = Dictionary(regions.filter { $0.id != "001" }.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The country code at the start of `digits` (country codes are prefix-free, 1 to 3 digits).
    func countryCode(atStartOf digits: String) -> Int? {
        guard digits.first != "0" else { return nil }
        for length in 1...3 where digits.count >= length {
            if let code = Int(digits.prefix(length)), regionsByCountryCode[code] != nil { return code }
        }
        return nil
    }
}

/// A libphonenumber pattern, compiled on first use (thread-safe; a compiled
/// NSRegularExpression may be used from any thread).
final class LazyPattern: @unchecked Sendable {
    let source: String
    private let lock = NSLock()
    private var compiled: NSRegularExpression?

    init(_ source: String) { self.source = source }

    var regex: NSRegularExpression {
        lock.lock()
        defer { lock.unlock() }
        if let compiled { return compiled }
        // The patterns come from the generated file; one that ICU could not compile matches nothing.
        let regex = (try? NSRegularExpression(pattern: source)) ?? (try! NSRegularExpression(pattern: "(?!)"))
        compiled = regex
        return regex
    }

    /// Python's `re.fullmatch`: some way through the pattern covers the whole number.
    func matchesWhole(_ number: String) -> Bool {
        guard !source.isEmpty else { return false }
        let whole = NSRange(number.startIndex..., in: number)
        // Anchoring at both ends makes the engine backtrack until the whole number is covered.
        return wholeRegex.firstMatch(in: number, options: [.anchored], range: whole) != nil
    }

    /// Python's `re.match`: a match starting at the first digit.
    func matchAtStart(_ number: String) -> NSTextCheckingResult? {
        regex.firstMatch(in: number, options: [.anchored], range: NSRange(number.startIndex..., in: number))
    }

    private var wholeCompiled: NSRegularExpression?
    private var wholeRegex: NSRegularExpression {
        lock.lock()
        defer { lock.unlock() }
        if let wholeCompiled { return wholeCompiled }
        let regex = (try? NSRegularExpression(pattern: "(?:\(source))$")) ?? (try! NSRegularExpression(pattern: "(?!)"))
        wholeCompiled = regex
        return regex
    }
}
