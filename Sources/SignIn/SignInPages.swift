import PortalWeb

/// The sign-in form, with a notice (signed out, session expired) or an error.
struct SignInPage: PageModel {
    static let template = "signin/signin"
    let titleKey = "sign_in_title"
    let csrf: String
    /// The name typed before a failed attempt, to correct rather than retype.
    let username: String?
    let notice: String?
    let error: String?
    /// PAM's own messages after a failed password change.
    let details: [String]
}

/// A further step PAM asks for (a one-time code, a second factor).
struct SignInStepPage: PageModel {
    static let template = "signin/signin-step"
    let titleKey = "sign_in_title"
    let csrf: String
    let prompt: String
    /// Whether the answer may be shown while typed (a code) or not (a secret).
    let echo: Bool
    let messages: [String]
    // Switching language would leave the step and abandon the sign-in.
    var hidesLanguageSwitch: Bool { true }
}

/// An expired password that must be changed before signing in.
struct PasswordChangePage: PageModel {
    static let template = "signin/signin-password"
    let titleKey = "password_change_title"
    let csrf: String
    let messages: [String]
    var hidesLanguageSwitch: Bool { true }
}
