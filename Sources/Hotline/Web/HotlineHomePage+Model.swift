import PortalWeb

extension HotlineHomePage {
    /// The notices a redirect may ask for (`/hotline?done=…`).
    static let notices: Set<String> = ["callback_queued", "ended", "passed_on"]

    /// The agent's open calls and the queue's size; `done` is what the redirect here says was
    /// done, `retention` how long a callback keeps a number, in words.
    init(
        openCalls: [Calls.Row], callbacksWaiting: Int, done: String?, retention: String, mayViewOverview: Bool,
        renderer: PageRenderer, language: Language
    ) {
        self.init(
            openCalls: openCalls.map { OpenCall(id: $0.id.uuidString.lowercased(), startedAt: renderer.dateTime($0.started_at, in: language)) },
            callbacksWaiting: renderer.text("hotline_callbacks_waiting", in: language, ["count": String(callbacksWaiting)]),
            notice: done.flatMap { Self.notices.contains($0)
                ? renderer.text("hotline_done_\($0)", in: language, ["retention": retention]) : nil },
            mayViewOverview: mayViewOverview)
    }
}
