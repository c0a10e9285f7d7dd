import Foundation
import Issuance
import PortalWeb

extension CallPage.Step {
    /// Checks until a teleTAN is issued, then the read-back, until the call ends.
    init(of call: Calls.Row) {
        self = !call.isOpen ? .ended : call.teletan_fingerprint != nil ? .readBack : .checks
    }
}

extension CallPage {
    /// The page of `call` in its current step. `answered` are the ticked checks, `missing` the
    /// required ones not ticked when Issue was pressed; `form` holds what the agent typed;
    /// `retention` says in words how long a callback keeps a number.
    init(
        call: Calls.Row, checks: HotlineChecks, answered: Set<String>, missing: Set<String>, form: Form, error: String?, notice: String?,
        caller: Caller?, repeatWarning: String?, teleTANWaiting: Bool, issueNonce: String?, readBackResult: ReadBack.Result?,
        idleTimeout: Duration, retention: String, now time: Date, renderer: PageRenderer, language: Language
    ) {
        let step = Step(of: call)
        let german = language == .german
        self.init(
            callID: call.id.uuidString.lowercased(),
            startedAt: renderer.dateTime(call.started_at, in: language),
            fromCallback: call.callback_id != nil,
            caller: caller,
            idleNotice: call.isOpen ? renderer.text("hotline_idle_notice", in: language, [
                "minutes": DurationText.limit(seconds: Int(idleTimeout.seconds), in: language),
                "time": renderer.time(time.addingTimeInterval(idleTimeout.seconds), in: language),
            ]) : nil,
            idleSeconds: Int(idleTimeout.seconds),
            sayCallback: renderer.text("hotline_say_callback", in: language, ["retention": retention]),
            step: step,
            checks: checks.all.map { check in
                Check(
                    id: check.id, label: german ? check.labelDE : check.labelEN, say: german ? check.sayDE : check.sayEN,
                    sayOther: german ? check.sayEN : check.sayDE, required: check.required, checked: answered.contains(check.id),
                    missing: missing.contains(check.id))
            },
            issueNonce: issueNonce,
            form: form,
            outcomes: CallOutcome.endable.map { Option(value: $0.rawValue, label: renderer.text("hotline_outcome_\($0.rawValue)", in: language)) },
            error: error, notice: notice,
            repeatWarning: repeatWarning,
            teleTANWaiting: teleTANWaiting,
            otherLanguage: language.other.rawValue,
            readBack: step == .readBack ? ReadBackSection(call: call, result: readBackResult, renderer: renderer, language: language) : nil,
            endedSummary: step == .ended ? renderer.text("hotline_ended_summary", in: language, [
                "outcome": renderer.text("hotline_outcome_\(call.outcome ?? "other")", in: language),
                "duration": DurationText.text(seconds: Int((call.ended_at ?? time).timeIntervalSince(call.started_at)), in: language),
            ]) : nil)
    }
}

extension CallPage.ReadBackSection {
    /// The read-back of the call's teleTAN: the result of the attempt just made (nil when none
    /// was), what differed, and how many attempts are left.
    init(call: Calls.Row, result: ReadBack.Result?, renderer: PageRenderer, language: Language) {
        let matched = call.readback_result == "matched"
        let left = Calls.readBackLimit - call.readback_attempts
        var differences: [String] = []
        var message: String?
        switch result {
        case .matches?: message = renderer.text("hotline_read_back_matches", in: language)
        case .differs(let found)?:
            message = renderer.text("hotline_read_back_differs", in: language)
            differences = found.map { difference in
                let heard = difference.heard.map { "\($0) (\(SpellingAlphabet.spell($0, in: language)))" }
                let actual = difference.actual.map { "\($0) (\(SpellingAlphabet.spell($0, in: language)))" }
                switch (heard, actual) {
                case let (heard?, actual?):
                    return renderer.text("hotline_read_back_position", in: language,
                                         ["position": String(difference.position), "heard": heard, "actual": actual])
                case let (nil, actual?):
                    return renderer.text("hotline_read_back_missing", in: language, ["position": String(difference.position), "actual": actual])
                case let (heard?, nil):
                    return renderer.text("hotline_read_back_extra", in: language, ["position": String(difference.position), "heard": heard])
                case (nil, nil):
                    return ""
                }
            }
        case .differsEverywhere?: message = renderer.text("hotline_read_back_differs_everywhere", in: language)
        case nil: message = matched ? renderer.text("hotline_read_back_matches", in: language) : nil
        }
        self.init(
            message: message, matched: result == .matches || (result == nil && matched), differences: differences,
            mayTryAgain: !matched && left > 0,
            attemptsLeft: renderer.text("hotline_read_back_left", in: language, ["count": String(max(0, left))]),
            exhausted: !matched && left <= 0)
    }
}
