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

        var any: Bool { recent || hotline || overview || audit || sessions }

        func value(named name: String) -> any TemplateValue {
            switch name {
            case "recent": recent
            case "hotline": hotline
            case "overview": overview
            case "audit": audit
            case "sessions": sessions
            case "any": any
            default: .undeclared
            }
        }
    }

    func value(named name: String) -> any TemplateValue {
        switch name {
        case "teleTANWasHidden": teleTANWasHidden
        case "teleTANWaiting": teleTANWaiting
        case "issueNonce": issueNonce
        case "mayIssue": mayIssue
        case "event": event
        case "links": links
        default: .undeclared
        }
    }
}

/// Signed in, but no role in this portal.
struct NoRolePage: PageModel {
    static let template = "issuance/no-role"
    let titleKey = "no_role_title"

    func value(named name: String) -> any TemplateValue { .undeclared }
}

/// The teleTAN, shown once: grouped, spelled out, with its type and expiry.
struct ResultPage: PageModel {
    struct Group: TemplateValues {
        let text: String
        /// The group's characters in the spelling alphabet of the page's language.
        let spelled: String

        func value(named name: String) -> any TemplateValue {
            switch name {
            case "text": text
            case "spelled": spelled
            default: .undeclared
            }
        }
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

    func value(named name: String) -> any TemplateValue {
        switch name {
        case "groups": groups
        case "type": type
        case "healthAuthority": healthAuthority
        case "reference": reference
        case "callID": callID
        case "validUntil": validUntil
        case "validUntilISO": validUntilISO
        case "hideAfterSeconds": hideAfterSeconds
        case "hiddenAfterText": hiddenAfterText
        default: .undeclared
        }
    }
}

/// Nothing waiting to be shown: it was shown already, or its display time is over.
struct AlreadyShownPage: PageModel {
    static let template = "issuance/already-shown"
    let titleKey = "already_shown_title"

    func value(named name: String) -> any TemplateValue { .undeclared }
}

/// The EVENT part of the start page: pick the requesting health authority and issue, or (under
/// the four-eyes rule) request, approve others' requests and issue approved ones.
struct EventSection: TemplateValues {
    struct Authority: TemplateValues {
        let id: String
        let name: String
        let selected: Bool

        func value(named name: String) -> any TemplateValue {
            switch name {
            case "id": id
            case "name": self.name
            case "selected": selected
            default: .undeclared
            }
        }
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

        func value(named name: String) -> any TemplateValue {
            switch name {
            case "id": id
            case "requestedBy": requestedBy
            case "authority": authority
            case "requestedAt": requestedAt
            case "reason": reason
            case "status": status
            case "approvedNonce": approvedNonce
            case "mayWithdraw": mayWithdraw
            default: .undeclared
            }
        }
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

    func value(named name: String) -> any TemplateValue {
        switch name {
        case "authorities": authorities
        case "noAuthorities": authorities.isEmpty
        case "reasonValue": reasonValue
        case "reasonError": reasonError
        case "directNonce": directNonce
        case "twoPerson": twoPerson
        case "ownRequests": ownRequests
        case "hasOwnRequests": !ownRequests.isEmpty
        case "toApprove": toApprove
        case "hasToApprove": !toApprove.isEmpty
        case "waitingForApproval": waitingForApproval
        case "approvedOwn": approvedOwn
        case "notice": notice
        default: .undeclared
        }
    }
}

/// The EVENT request form again, after a refused reason: what was typed, and what is wrong.
struct EventRequestPage: PageModel {
    static let template = "issuance/event-request"
    let titleKey = "event_request_title"
    let event: EventSection

    func value(named name: String) -> any TemplateValue {
        switch name {
        case "event": event
        default: .undeclared
        }
    }
}

/// "My recent teleTANs".
struct RecentPage: PageModel {
    struct Item: TemplateValues {
        let id: String
        let reference: String
        let type: String
        let healthAuthority: String?
        let issuedAt: String
        let validUntil: String
        let status: String
        let statusKey: String
        /// Why it was revoked (the reason's label and the note), for a revoked one.
        let revokeReason: String?
        /// The hotline call it was issued in.
        let call: Call?
        let mayRevoke: Bool

        func value(named name: String) -> any TemplateValue {
            switch name {
            case "id": id
            case "reference": reference
            case "type": type
            case "healthAuthority": healthAuthority
            case "issuedAt": issuedAt
            case "validUntil": validUntil
            case "status": status
            case "statusKey": statusKey
            case "revokeReason": revokeReason
            case "call": call
            case "mayRevoke": mayRevoke
            default: .undeclared
            }
        }
    }

    /// A hotline call: its page, when it started and how it ended (nil once its record is gone).
    struct Call: TemplateValues {
        let id: String
        let startedAt: String?
        let outcome: String?

        func value(named name: String) -> any TemplateValue {
            switch name {
            case "id": id
            case "startedAt": startedAt
            case "outcome": outcome
            default: .undeclared
            }
        }
    }

    static let template = "issuance/recent"
    let titleKey = "recent_title"
    let items: [Item]
    let notice: String?
    /// The verification service cannot tell statuses (a server without the endpoint, or down).
    let statusUnknown: Bool

    func value(named name: String) -> any TemplateValue {
        switch name {
        case "items": items
        case "hasItems": !items.isEmpty
        case "notice": notice
        case "statusUnknown": statusUnknown
        default: .undeclared
        }
    }
}

/// "Revoke this teleTAN?": which one, why (a choice and an optional note), confirm or go back.
struct RevokePage: PageModel {
    enum Problem: Equatable {
        case reason
        case note(ShortText.Problem)
    }

    struct Reason: TemplateValues {
        let code: String
        let label: String
        let checked: Bool

        func value(named name: String) -> any TemplateValue {
            switch name {
            case "code": code
            case "label": label
            case "checked": checked
            default: .undeclared
            }
        }
    }

    static let template = "issuance/revoke"
    let titleKey = "revoke_title"
    let id: String
    let reference: String
    let type: String
    let healthAuthority: String?
    let issuedAt: String
    let call: RecentPage.Call?
    let reasons: [Reason]
    let note: String
    let maxNote: Int
    /// What is missing or wrong in the form, and its text.
    let problem: Problem?
    let error: String?

    func value(named name: String) -> any TemplateValue {
        switch name {
        case "id": id
        case "reference": reference
        case "type": type
        case "healthAuthority": healthAuthority
        case "issuedAt": issuedAt
        case "call": call
        case "reasons": reasons
        case "note": note
        case "maxNote": maxNote
        case "error": error
        case "errorOnReason": problem == .reason
        case "errorOnNote": problem != nil && problem != .reason
        default: .undeclared
        }
    }
}
