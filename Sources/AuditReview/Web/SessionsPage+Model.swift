import PortalWeb

extension SessionsPage {
    /// The active sessions; `viewer`'s own is marked (they end it by signing out).
    init(sessions: [SessionDirectory.Entry], viewer: SignedInUser, notice: String?, renderer: PageRenderer, language: Language) {
        self.init(
            items: sessions.map { entry in
                Item(
                    handle: entry.handle, username: entry.username,
                    roles: entry.roles.sorted().map { renderer.text("role_\($0.rawValue)", in: language) }.joined(separator: ", "),
                    since: renderer.dateTime(entry.signedInAt, in: language), lastSeen: renderer.dateTime(entry.lastSeenAt, in: language),
                    address: entry.address ?? "-", isOwn: entry.belongs(to: viewer))
            },
            notice: notice)
    }
}
