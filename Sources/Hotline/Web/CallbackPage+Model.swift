import Foundation
import PortalWeb

extension CallbackPage {
    /// The callback `row` the agent holds, with the number and name from its sealed contact.
    init(
        row: Callbacks.Row, phone: PhoneNumber, name: String, repeatWarning: String?, callbacks: Callbacks, now time: Date,
        renderer: PageRenderer, language: Language
    ) {
        self.init(
            id: row.id.uuidString.lowercased(), phone: phone.readable, phoneLink: "tel:\(phone.e164)", name: name,
            queuedAt: renderer.dateTime(row.created_at, in: language),
            attempts: renderer.text("hotline_attempts", in: language, ["count": String(row.attempts), "max": String(callbacks.maximumAttempts)]),
            repeatWarning: repeatWarning,
            holdUntil: renderer.dateTime((row.taken_at ?? time).addingTimeInterval(callbacks.takeTimeout), in: language))
    }
}
