import Foundation

/// Which numbers the authority calls back (`--callback-numbers`). A callback costs the authority
/// what the number costs: someone who queues a premium-rate, shared-cost or foreign number makes
/// the authority pay them, so by default only German fixed-line and mobile numbers are called.
///
/// Syntax: comma-separated entries, each one of
/// - `DE`: the fixed-line and mobile numbers of a region (ISO 3166 code, as libphonenumber knows it);
/// - `AT:fixed-line+mobile+toll-free`: the named types of a region's numbers (`any`: every type);
/// - `+4980012`: every valid number starting with this E.164 prefix (a country code and
///   optionally more digits), of any type.
/// A number of the type "fixed-line-or-mobile" (where the plan does not tell them apart, as in the
/// US) counts as either. Default: `DE`.
package struct CallbackNumberPolicy: Sendable, Equatable {
    package enum Entry: Sendable, Equatable {
        case region(String, Set<PhoneNumberType>)
        case prefix(String)
    }

    package let entries: [Entry]

    /// German fixed-line and mobile numbers.
    package static let standard = CallbackNumberPolicy(entries: [.region("DE", [.fixedLine, .mobile])])

    /// Whether this is the default, whose refusal message can name what is allowed.
    package var isStandard: Bool { self == .standard }

    package init(entries: [Entry]) {
        self.entries = entries
    }

    /// The types an entry names: every type the fixture and the docs know, and `any`.
    static let typeNames = PhoneNumberType.allCases.filter { $0 != .fixedLineOrMobile }.map(\.rawValue) + ["any"]

    /// Reads the flag's value; the error says which entry is wrong and what was expected.
    package init(parsing text: String) throws(Failure) {
        let metadata = PhoneNumberMetadata.shared
        var entries: [Entry] = []
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts != [""] else { throw Failure("expected at least one entry such as DE, AT:fixed-line+mobile or +4930") }
        for part in parts {
            guard !part.isEmpty else { throw Failure("empty entry in '\(text)' (entries are separated by single commas)") }
            if part.hasPrefix("+") {
                let digits = part.dropFirst()
                guard (1...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    throw Failure("'\(part)': a prefix is + and 1 to 15 digits, e.g. +4930")
                }
                guard let code = metadata.countryCode(atStartOf: String(digits)), digits.count >= String(code).count else {
                    throw Failure("'\(part)': does not start with a country code")
                }
                entries.append(.prefix(part))
                continue
            }
            let pieces = part.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let region = pieces[0].uppercased()
            guard metadata.regionsByID[region] != nil else {
                throw Failure("'\(part)': unknown region '\(pieces[0])' (expected an ISO 3166 code such as DE or AT, or a prefix such as +4930)")
            }
            guard pieces.count == 2 else {
                entries.append(.region(region, [.fixedLine, .mobile]))
                continue
            }
            var types: Set<PhoneNumberType> = []
            for name in pieces[1].split(separator: "+", omittingEmptySubsequences: false) {
                if name == "any" {
                    types.formUnion(PhoneNumberType.allCases)
                } else if let type = PhoneNumberType(rawValue: String(name)), type != .fixedLineOrMobile {
                    types.insert(type)
                } else {
                    throw Failure("'\(part)': unknown number type '\(name)' (expected types joined by +: \(Self.typeNames.joined(separator: ", ")))")
                }
            }
            entries.append(.region(region, types))
        }
        self.entries = entries
    }

    /// Whether the authority may call this number back.
    package func allows(_ number: PhoneNumber) -> Bool {
        entries.contains { entry in
            switch entry {
            case let .prefix(prefix):
                return number.e164.hasPrefix(prefix)
            case let .region(region, types):
                guard number.region == region else { return false }
                if number.type == .fixedLineOrMobile { return !types.isDisjoint(with: [.fixedLine, .mobile, .fixedLineOrMobile]) }
                return types.contains(number.type)
            }
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }
}
