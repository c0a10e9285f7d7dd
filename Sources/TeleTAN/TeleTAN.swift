import Crypto

/// A teleTAN in the format the Corona-Warn-App validates: nine random characters from
/// ``alphabet`` followed by one check character (see docs/architecture.md, "teleTAN format").
///
/// `description` is redacted on purpose so that a teleTAN interpolated into a log line by
/// mistake never reaches the log. Use ``value`` where the characters are really needed.
package struct TeleTAN: Sendable, Hashable, CustomStringConvertible {
    /// 31 characters: no 0, 1, I, L or O, which are easily confused on the phone.
    package static let alphabet: [Character] = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    package static let bodyLength = 9
    package static let length = bodyLength + 1

    /// The ten upper-case characters.
    package let value: String

    /// Parses user or API input the way the app does: case-insensitive, surrounding white space
    /// ignored, every character from the alphabet, and a matching check character.
    package init?(_ input: some StringProtocol) {
        let candidate = input.trimmingWhitespace().uppercased()
        guard Self.isWellFormed(candidate) else { return nil }
        let body = candidate.prefix(Self.bodyLength)
        guard Self.checkCharacter(for: body) == candidate.last else { return nil }
        self.value = candidate
    }

    private init(validated value: String) {
        self.value = value
    }

    /// True when `candidate` has ten characters from the alphabet; the check character is not
    /// looked at (this is what the original CWA server checked).
    package static func isWellFormed(_ candidate: String) -> Bool {
        candidate.count == length && candidate.allSatisfy { alphabet.contains($0) }
    }

    /// SHA-256 over the upper-cased body, first hex digit of the digest, upper-cased, with
    /// `0` replaced by `G` and `1` by `H` (so the check character is always in the alphabet).
    package static func checkCharacter(for body: some StringProtocol) -> Character {
        let digest = SHA256.hash(data: Array(body.uppercased().utf8))
        let firstNibble = digest.withUnsafeBytes { $0[0] >> 4 }
        switch firstNibble {
        case 0: return "G"
        case 1: return "H"
        default: return Character(String(firstNibble, radix: 16, uppercase: true))
        }
    }

    /// A new teleTAN from a cryptographically secure generator (`SystemRandomNumberGenerator`
    /// reads the kernel's CSPRNG on Linux).
    package static func random() -> TeleTAN {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new teleTAN from `generator`; tests pass a seeded one, production code uses ``random()``.
    package static func random<G: RandomNumberGenerator>(using generator: inout G) -> TeleTAN {
        var body = ""
        for _ in 0..<bodyLength {
            // `randomElement(using:)` draws uniformly (no modulo bias).
            body.append(alphabet.randomElement(using: &generator)!)
        }
        return TeleTAN(validated: body + String(checkCharacter(for: body)))
    }

    /// Groups of 3, 3 and 4 characters, easier to read out on the phone: `ABC DEF GHJK`.
    package var groups: [String] {
        let characters = Array(value)
        return [String(characters[0..<3]), String(characters[3..<6]), String(characters[6..<10])]
    }

    package var description: String { "TeleTAN(redacted)" }
}

extension StringProtocol {
    func trimmingWhitespace() -> Substring {
        let scalars = Substring(self)
        guard let start = scalars.firstIndex(where: { !$0.isWhitespace }),
              let end = scalars.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return scalars[start...end]
    }
}
