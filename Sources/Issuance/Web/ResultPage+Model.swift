import Foundation
import PortalWeb
import TeleTAN

extension ResultPage {
    /// The teleTAN taken from its display, shown for `remainingSeconds` more.
    init(teleTAN: TeleTAN, content: PendingDisplays.Content, remainingSeconds: Int, renderer: PageRenderer, language: Language) {
        self.init(
            groups: teleTAN.groups.map { group in
                Group(text: group, spelled: group.map { SpellingAlphabet.spell($0, in: language) }.joined(separator: " - "))
            },
            type: content.type,
            healthAuthority: content.healthAuthority,
            reference: content.reference,
            callID: content.callID,
            // In the authority's zone with its name, whatever zone the server runs in.
            validUntil: renderer.dateTime(content.validUntil, in: language),
            validUntilISO: content.validUntil.formatted(.iso8601),
            hideAfterSeconds: remainingSeconds,
            hiddenAfterText: renderer.text(
                "result_hidden_after", in: language, ["duration": DurationText.text(seconds: remainingSeconds, in: language)]))
    }
}
