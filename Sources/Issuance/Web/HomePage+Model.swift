import PortalWeb

extension HomePage {
    /// The start page for `user`: what their roles let them do from here. `issueNonce` is the
    /// issuing form's one-use token (nil while a teleTAN waits); `event` the EVENT section, for
    /// the event role.
    init(for user: SignedInUser, teleTANWasHidden: Bool, teleTANWaiting: Bool, issueNonce: String?, event: EventSection?) {
        self.init(
            teleTANWasHidden: teleTANWasHidden, teleTANWaiting: teleTANWaiting, issueNonce: issueNonce,
            mayIssue: user.may(.issueTestTeleTAN) || user.may(.issueEventTeleTAN) || user.may(.workHotlineCalls),
            event: event, links: Links(for: user))
    }
}

extension HomePage.Links {
    init(for user: SignedInUser) {
        self.init(
            recent: user.may(.seeOwnTeleTANs), hotline: user.may(.workHotlineCalls),
            overview: user.may(.viewHotlineOverview), audit: user.may(.reviewAuditTrail),
            sessions: user.may(.manageSessionsAndLockouts), quota: user.may(.manageDailyQuota))
    }
}
