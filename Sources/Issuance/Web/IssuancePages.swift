import PortalWeb

/// The start page: the issuing form for those who may issue.
struct HomePage: PageModel {
    static let template = "issuance/home"
    let titleKey = "home_title"
    /// After the display time ran out, the result page comes back here and says so.
    let teleTANWasHidden: Bool
    /// A teleTAN issued earlier has not been shown yet (the browser did not follow the redirect):
    /// the page offers it instead of the issuing form.
    let teleTANWaiting: Bool
    /// The issuing form's one-use token; nil for a user who may not issue, or while one waits.
    let issueNonce: String?
    /// Any issuing role (else the page says there is none).
    let mayIssue: Bool
    /// EVENT teleTANs, for the event role.
    let event: EventSection?
    let links: Links

    /// Where else the user may go from here.
    struct Links: TemplateValues {
        let recent: Bool
        let hotline: Bool
        let overview: Bool
        /// The admin pages: audit trail, sessions and lockouts.
        let audit: Bool
        let sessions: Bool
        /// The daily quota's page.
        let quota: Bool

        func derivedValue(named name: String) -> any TemplateValue {
            switch name {
            case "any": recent || hotline || overview || audit || sessions || quota
            default: .undeclared
            }
        }
    }
}

/// Signed in, but no role in this portal.
struct NoRolePage: PageModel {
    static let template = "issuance/no-role"
    let titleKey = "no_role_title"
}

/// The teleTAN, shown once: grouped, spelled out, with its type and expiry.
struct ResultPage: PageModel {
    struct Group: TemplateValues {
        let text: String
        /// The group's characters in the spelling alphabet of the page's language.
        let spelled: String
    }

    static let template = "issuance/result"
    let titleKey = "result_title"
    let groups: [Group]
    let type: String
    /// The requesting health authority of an EVENT teleTAN.
    let healthAuthority: String?
    /// The short reference "My recent teleTANs" lists it under, to note on the call sheet; nil
    /// for one sealed before references were shown.
    let reference: String?
    /// The hotline call it was issued in: the page leads on to the read-back.
    let callID: String?
    let validUntil: String
    let validUntilISO: String
    let hideAfterSeconds: Int
    let hiddenAfterText: String
    // Switching language would leave the page, and the teleTAN is never shown again.
    var hidesLanguageSwitch: Bool { true }
}

/// Nothing waiting to be shown: it was shown already, or its display time is over.
struct AlreadyShownPage: PageModel {
    static let template = "issuance/already-shown"
    let titleKey = "already_shown_title"
}

/// The EVENT part of the start page: pick the requesting health authority and issue, or (under
/// the four-eyes rule) request, approve others' requests and issue approved ones.
struct EventSection: TemplateValues {
    struct Authority: TemplateValues {
        let id: String
        let name: String
        let selected: Bool
    }

    struct Request: TemplateValues {
        let id: String
        let requestedBy: String
        let authority: String
        let requestedAt: String
        /// The requester's reason or case reference.
        let reason: String
        let status: String
        /// The one-use token of the issuing form, for an approved request of the viewer's own.
        let approvedNonce: String?
        /// The requester may still take it back (pending, or approved and not issued).
        let mayWithdraw: Bool
    }

    let authorities: [Authority]
    /// The request form's reason as typed (kept when it was refused) and what is wrong with it.
    let reasonValue: String
    let reasonError: String?
    /// Direct issuing (no four-eyes rule): the form's one-use token; nil while a teleTAN waits.
    let directNonce: String?
    let twoPerson: Bool
    let ownRequests: [Request]
    let toApprove: [Request]
    /// "2 requests wait for your approval": at the top of every event officer's start page.
    let waitingForApproval: String
    /// One line per own request approved and not yet issued ("… was approved by …").
    let approvedOwn: [String]
    let notice: String?
}

/// The EVENT request form again, after a refused reason: what was typed, and what is wrong.
struct EventRequestPage: PageModel {
    static let template = "issuance/event-request"
    let titleKey = "event_request_title"
    let event: EventSection
}

/// `/admin/quota`: today's daily quotas, the days each was predicted from, today's raises, and
/// the form that raises one.
struct QuotaPage: PageModel {
    /// What is wrong with a submitted raise.
    enum Problem: Error, Equatable, Encodable {
        case scope, amount
        case reason(ShortText.Problem)
    }

    struct Item: TemplateValues {
        let scope: String
        let name: String
        let quota: Int
        let extra: Int
        let limit: Int
        let used: Int
        let left: Int
        /// How the quota was set: predicted (with the line's value), or the fixed quota.
        let how: String
        let basis: [Day]
    }

    struct Day: TemplateValues {
        let day: String
        let issued: Int
    }

    struct Raise: TemplateValues {
        let name: String
        let amount: Int
        let reason: String
        let raisedBy: String
        let raisedAt: String
    }

    /// The raise form as typed.
    struct Form: TemplateValues {
        var scope: String
        var amount = ""
        var reason = ""
    }

    struct Option: TemplateValues {
        let scope: String
        let name: String
        let selected: Bool
    }

    static let template = "issuance/quota"
    let titleKey = "quota_title"
    let items: [Item]
    let raises: [Raise]
    let options: [Option]
    let form: Form
    let maxAmount: Int
    let maxReason: Int
    /// When today's quotas end (the authority's midnight).
    let resetsAt: String
    let notice: String?
    let problem: Problem?
    let error: String?

    func derivedValue(named name: String) -> any TemplateValue {
        switch name {
        case "errorOnAmount": problem == .amount
        case "errorOnReason": if case .reason = problem { true } else { false }
        default: .undeclared
        }
    }
}
