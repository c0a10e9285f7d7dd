import PortalWeb

extension SignInPage {
    /// The sign-in form in `language`, with the texts of a notice or an error given by their keys;
    /// after a failure it keeps the name that was typed (never the password), as PAM would see it.
    init(
        csrf: String, typedName: String?, noticeKey: String?, errorKey: String?, errorValues: [String: String],
        details: [String], renderer: PageRenderer, language: Language
    ) {
        self.init(
            csrf: csrf, username: typedName.map(SignInPolicy.auditableName),
            notice: noticeKey.map { renderer.text($0, in: language) },
            error: errorKey.map { renderer.text($0, in: language, errorValues) },
            details: details)
    }
}
