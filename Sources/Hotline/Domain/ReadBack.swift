import Crypto
import TeleTAN

/// Compares what a caller reads back with the teleTAN issued in the call, knowing only the
/// teleTAN's keyed fingerprint: the typed text is hashed the same way and compared, never stored.
///
/// When it does not match, the comparison looks for the teleTAN among the texts one slip away
/// (one or two characters misheard, two neighbours swapped, one left out or one too many),
/// each hashed and compared with the same fingerprint, and names the differing positions with
/// the right characters. That tells the agent nothing they were not shown; and as only this
/// call's fingerprint is ever compared, it is no oracle for any other teleTAN.
package struct ReadBack: Sendable {
    package struct Difference: Sendable, Equatable {
        /// 1-based position in the teleTAN.
        package let position: Int
        /// What was read back there; nil when a character is missing.
        package let heard: Character?
        /// What the teleTAN has there; nil when the read-back has one too many.
        package let actual: Character?
    }

    package enum Result: Sendable, Equatable {
        case matches
        /// Does not match; where it differs, when that could be found.
        case differs([Difference])
        /// Does not match, and is too far off to say where.
        case differsEverywhere
    }

    let hasher: KeyedHasher

    package init(hasher: KeyedHasher) {
        self.hasher = hasher
    }

    /// Upper case, without spaces, dashes and dots (as people type groups).
    package static func normalised(_ typed: String) -> [UInt8] {
        Array(typed.uppercased().utf8.filter { ![UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "."), 9].contains($0) })
    }

    package func compare(_ typed: String, fingerprint: String) -> Result {
        let heard = Self.normalised(typed)
        guard heard.count <= 2 * TeleTAN.length else { return .differsEverywhere }
        if isTheTeleTAN(heard, fingerprint) { return .matches }
        let alphabet = TeleTAN.alphabet.map { UInt8(ascii: $0.unicodeScalars.first!) }
        var candidate = heard
        switch heard.count {
        case TeleTAN.length:
            // One character misheard.
            for i in 0..<heard.count {
                for c in alphabet where c != heard[i] {
                    candidate[i] = c
                    if isTheTeleTAN(candidate, fingerprint) { return .differs(differences(heard, candidate)) }
                }
                candidate[i] = heard[i]
            }
            // Two neighbours swapped.
            for i in 0..<(heard.count - 1) where heard[i] != heard[i + 1] {
                candidate.swapAt(i, i + 1)
                if isTheTeleTAN(candidate, fingerprint) { return .differs(differences(heard, candidate)) }
                candidate.swapAt(i, i + 1)
            }
            // Two characters misheard.
            for i in 0..<heard.count {
                for j in (i + 1)..<heard.count {
                    for a in alphabet where a != heard[i] {
                        candidate[i] = a
                        for b in alphabet where b != heard[j] {
                            candidate[j] = b
                            if isTheTeleTAN(candidate, fingerprint) { return .differs(differences(heard, candidate)) }
                        }
                        candidate[j] = heard[j]
                    }
                    candidate[i] = heard[i]
                }
            }
        case TeleTAN.length - 1:
            // One character left out.
            for i in 0...heard.count {
                for c in alphabet {
                    var longer = heard
                    longer.insert(c, at: i)
                    if isTheTeleTAN(longer, fingerprint) {
                        return .differs([Difference(position: i + 1, heard: nil, actual: Character(UnicodeScalar(c)))])
                    }
                }
            }
        case TeleTAN.length + 1:
            // One character too many.
            for i in 0..<heard.count {
                var shorter = heard
                shorter.remove(at: i)
                if isTheTeleTAN(shorter, fingerprint) {
                    return .differs([Difference(position: i + 1, heard: Character(UnicodeScalar(heard[i])), actual: nil)])
                }
            }
        default:
            break
        }
        return .differsEverywhere
    }

    /// A well-formed teleTAN (check character first: cheap, and rules out 15 of 16 candidates)
    /// whose keyed fingerprint is the one issued.
    private func isTheTeleTAN(_ bytes: [UInt8], _ fingerprint: String) -> Bool {
        guard bytes.count == TeleTAN.length else { return false }
        let body = bytes.prefix(TeleTAN.bodyLength)
        let nibble = SHA256.hash(data: Array(body)).withUnsafeBytes { $0[0] >> 4 }
        let check: UInt8 = switch nibble {
        case 0: UInt8(ascii: "G")
        case 1: UInt8(ascii: "H")
        case 2...9: UInt8(ascii: "0") + nibble
        default: UInt8(ascii: "A") + nibble - 10
        }
        guard bytes[TeleTAN.bodyLength] == check else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        return hasher.matches(fingerprint, text, for: .teleTANFingerprint)
    }

    private func differences(_ heard: [UInt8], _ actual: [UInt8]) -> [Difference] {
        heard.indices.filter { heard[$0] != actual[$0] }.map {
            Difference(position: $0 + 1, heard: Character(UnicodeScalar(heard[$0])), actual: Character(UnicodeScalar(actual[$0])))
        }
    }
}
