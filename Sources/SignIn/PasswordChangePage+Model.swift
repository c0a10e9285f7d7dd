import PAMAuth

extension PasswordChangePage {
    /// PAM asks for a new password: its messages say why and what it must be like.
    init(csrf: String, challenge: PAMChallenge) {
        self.init(csrf: csrf, messages: challenge.messages)
    }
}
