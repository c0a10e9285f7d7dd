import PortalWeb

/// `/hotline`: start a call, the agent's open calls, the queue's size.
struct HotlineHomePage: PageModel {
    struct OpenCall: TemplateValues {
        let id: String
        let startedAt: String
    }

    static let template = "hotline/home"
    let titleKey = "hotline_title"
    let openCalls: [OpenCall]
    let callbacksWaiting: String
    let notice: String?
    let mayViewOverview: Bool
}

/// One call: the script and checks, then the read-back, then a summary.
struct CallPage: PageModel {
    enum Step: String, Encodable { case checks, readBack, ended }

    struct Check: TemplateValues {
        let id: String
        let label: String
        let say: String?
        /// The same question in the other language, for a caller who speaks it.
        let sayOther: String?
        let required: Bool
        let checked: Bool
        /// Required, not ticked, and Issue was pressed.
        let missing: Bool
    }

    /// The caller of a reached callback, while the callback keeps number and name.
    struct Caller: TemplateValues {
        let phone: String
        let phoneLink: String
        let name: String
    }

    struct Option: TemplateValues {
        let value: String
        let label: String
    }

    /// What the agent typed, when the page comes back with an error, and the field it is about
    /// (`phone`, `name`, `outcome` or `read-back`).
    struct Form: TemplateValues {
        var phone: String?
        var name: String?
        var errorField: String?

        func derivedValue(named name: String) -> any TemplateValue {
            switch name {
            case "errorOnPhone": errorField == "phone"
            case "errorOnName": errorField == "name"
            case "errorOnOutcome": errorField == "outcome"
            case "errorOnReadBack": errorField == "read-back"
            default: .undeclared
            }
        }
    }

    struct ReadBackSection: TemplateValues {
        let message: String?
        let matched: Bool
        /// Each differing position, spelled.
        let differences: [String]
        let mayTryAgain: Bool
        let attemptsLeft: String
        /// No read-back left: revoke and issue a new one.
        let exhausted: Bool
    }

    static let template = "hotline/call"
    let titleKey = "hotline_call_title"
    let callID: String
    let startedAt: String
    let fromCallback: Bool
    let caller: Caller?
    /// "Without activity your session ends after 30 minutes (at 14:32)."
    let idleNotice: String?
    let idleSeconds: Int
    /// "We delete your number … at the latest after one hour" (the configured retention).
    let sayCallback: String
    let step: Step
    let checks: [Check]
    let issueNonce: String?
    let form: Form
    let outcomes: [Option]
    let error: String?
    let notice: String?
    /// "This number received a teleTAN 3 days ago."
    let repeatWarning: String?
    /// This call's teleTAN has not been shown yet: the page offers it.
    let teleTANWaiting: Bool
    /// `de` or `en`: the language of `Check.sayOther`.
    let otherLanguage: String
    let readBack: ReadBackSection?
    let endedSummary: String?

    func derivedValue(named name: String) -> any TemplateValue {
        switch name {
        case "isChecks": step == .checks
        case "isReadBack": step == .readBack
        case "isEnded": step == .ended
        default: .undeclared
        }
    }
}

/// `/hotline/callbacks`: the shared queue, numbers masked.
struct CallbackQueuePage: PageModel {
    struct Entry: TemplateValues {
        let id: String
        let maskedNumber: String
        let waitingSince: String
        let attempts: String
        /// Taken by another agent (their username), while their take lasts.
        let takenBy: String?
        let mine: Bool
        let mayTake: Bool
        let repeatWarning: String?
    }

    struct Closed: TemplateValues {
        let queuedAt: String
        let closedAt: String
        let outcome: String
        let attempts: String
    }

    static let template = "hotline/callbacks"
    let titleKey = "hotline_callbacks_title"
    /// The queue's rules, with the configured retention in words.
    let intro: String
    let entries: [Entry]
    let closed: [Closed]
    let notice: String?
}

/// A taken callback: the full number and name for the agent who holds it, and the outcomes.
struct CallbackPage: PageModel {
    static let template = "hotline/callback"
    let titleKey = "hotline_callback_title"
    let id: String
    let phone: String
    let phoneLink: String
    let name: String
    let queuedAt: String
    let attempts: String
    let repeatWarning: String?
    let holdUntil: String
}

/// `/hotline/overview`: counts only.
struct OverviewPage: PageModel {
    struct Count: TemplateValues {
        let label: String
        let today: Int
        let week: Int
    }

    struct Day: TemplateValues {
        let day: String
        let count: Int
    }

    static let template = "hotline/overview"
    let titleKey = "hotline_overview_title"
    let outcomes: [Count]
    let totalToday: Int
    let totalWeek: Int
    let callbacksWaiting: Int
    let oldestWait: String?
    let days: [Day]
}
