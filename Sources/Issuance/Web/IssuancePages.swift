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
    let mayIssue: Bool
}

/// Signed in, but no role in this portal.
struct NoRolePage: PageModel {
    static let template = "issuance/no-role"
    let titleKey = "no_role_title"
}

/// The teleTAN, shown once: grouped, spelled out, with its type and expiry.
struct ResultPage: PageModel {
    struct Group: Sendable {
        let text: String
        /// The group's characters in the spelling alphabet of the page's language.
        let spelled: String
    }

    static let template = "issuance/result"
    let titleKey = "result_title"
    let groups: [Group]
    let type: String
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
