import Foundation

/// A caller's name as typed for the callback: 1 to 100 characters, no control or format
/// characters.
package enum PersonName {
    /// What is wrong with a typed name, so the page can say it.
    package enum Problem: String, Sendable {
        case empty
        case tooLong = "too_long"
        /// A tab, line break or other invisible control or format character, pasted along.
        case controlCharacter = "control_character"
    }

    /// The name without surrounding white space, or nil if it has a ``Problem``.
    package static func validated(_ input: String) -> String? {
        problem(input) == nil ? input.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }

    /// nil: the name is fine.
    package static func problem(_ input: String) -> Problem? {
        let name = input.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty { return .empty }
        if name.count > 100 { return .tooLong }
        if name.unicodeScalars.contains(where: { [.control, .format].contains($0.properties.generalCategory) }) { return .controlCharacter }
        return nil
    }
}
