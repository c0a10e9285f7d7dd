import Foundation

/// A short free text a user types where the portal asks for a reason (an EVENT request's reason
/// or case reference, a revocation's note). The page says not to enter personal data; the portal
/// cannot know, so it keeps such text out of the audit trail (docs/security.md) and limits what
/// it can be: at most ``maximumLength`` characters, no control or format characters (no line
/// breaks, no bidirectional overrides that make a text read differently than it is stored).
package enum ShortText {
    package static let maximumLength = 80

    package enum Problem: String, Equatable, Sendable {
        case empty, tooLong = "too_long", controlCharacter = "control_character"
    }

    /// The trimmed text, or why it is refused. An empty text is `.empty` (the caller decides
    /// whether that is allowed).
    package static func check(_ raw: String?) -> Result<String, ShortTextProblem> {
        let text = (raw ?? "").trimmingCharacters(in: .whitespaces)
        if text.unicodeScalars.contains(where: { [.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) }) {
            return .failure(ShortTextProblem(problem: .controlCharacter))
        }
        if text.isEmpty { return .failure(ShortTextProblem(problem: .empty)) }
        if text.count > maximumLength { return .failure(ShortTextProblem(problem: .tooLong)) }
        return .success(text)
    }
}

/// Why a ``ShortText`` was refused, as an error.
package struct ShortTextProblem: Error, Equatable, Sendable {
    package let problem: ShortText.Problem
}

/// Why an issuer revokes a teleTAN: a code from a fixed list (recorded in the audit trail) and an
/// optional short note (kept with the issued teleTAN's row for its week, never in the trail).
package struct RevocationReason: Sendable, Equatable {
    package enum Code: String, Sendable, CaseIterable {
        /// Read to the wrong person.
        case wrongPerson = "wrong_person"
        /// The caller did not get it right (misheard, typed wrongly).
        case notReceived = "not_received"
        /// Issued twice or by mistake.
        case issuedByMistake = "issued_by_mistake"
        /// Suspected misuse (a caller who is not eligible).
        case suspectedMisuse = "suspected_misuse"
        case other
    }

    package let code: Code
    package let note: String?

    package init(code: Code, note: String? = nil) {
        self.code = code
        self.note = note
    }
}
