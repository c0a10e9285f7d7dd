import Foundation

extension PersonName {
    /// What is wrong with a typed name, so the page can say it (nil: the name is fine).
    package enum Problem: String, Sendable {
        case empty
        case tooLong = "too_long"
        /// A tab, line break or other invisible control or format character, pasted along.
        case controlCharacter = "control_character"
    }

    package static func problem(_ input: String) -> Problem? {
        let name = input.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty { return .empty }
        if name.count > 100 { return .tooLong }
        if name.unicodeScalars.contains(where: { [.control, .format].contains($0.properties.generalCategory) }) { return .controlCharacter }
        return nil
    }
}
