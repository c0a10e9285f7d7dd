import PAMAuth

extension SignInStepPage {
    /// The next question PAM asks (a one-time code, a second factor), with its messages.
    init(csrf: String, challenge: PAMChallenge) {
        self.init(
            csrf: csrf, prompt: challenge.prompt.trimmingCharacters(in: .whitespaces), echo: challenge.echo,
            messages: challenge.messages)
    }
}
