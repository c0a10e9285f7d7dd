import Crypto
import Foundation
import TeleTAN

/// The result of a read-back between the POST that checked it and the page that shows it: the
/// check answers with a redirect (so the browser keeps no form with the typed characters in its
/// history), and the result waits on the call, sealed like a waiting teleTAN (it can name
/// characters of the teleTAN), until the call page shows it once.
package struct ReadBackNotes: Sendable {
    private struct Note: Codable {
        struct Difference: Codable {
            let position: Int
            let heard: String?
            let actual: String?
        }
        /// `matches`, `differs` or `everywhere`.
        let kind: String
        let differences: [Difference]
    }

    private let sealer: Sealer

    package init(keyring: ServerKeyring) {
        sealer = Sealer(keyring: keyring, purpose: "hotline-readback")
    }

    func seal(_ result: ReadBack.Result, for callID: UUID) throws -> String {
        let note: Note = switch result {
        case .matches: Note(kind: "matches", differences: [])
        case .differsEverywhere: Note(kind: "everywhere", differences: [])
        case .differs(let found):
            Note(kind: "differs", differences: found.map {
                .init(position: $0.position, heard: $0.heard.map(String.init), actual: $0.actual.map(String.init))
            })
        }
        return try sealer.seal(note, boundTo: callID.uuidString)
    }

    func open(_ sealed: String, for callID: UUID) -> ReadBack.Result? {
        guard let note = sealer.open(Note.self, from: sealed, boundTo: callID.uuidString) else { return nil }
        switch note.kind {
        case "matches": return .matches
        case "differs":
            return .differs(note.differences.map {
                .init(position: $0.position, heard: $0.heard.flatMap(\.first), actual: $0.actual.flatMap(\.first))
            })
        default: return .differsEverywhere
        }
    }
}
