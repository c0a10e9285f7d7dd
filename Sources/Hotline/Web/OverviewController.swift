import Foundation
import Hummingbird
import PortalWeb
import Storage

/// `/hotline/overview` for hotline staff and admins: calls by outcome today and this week,
/// callbacks waiting and the oldest wait, teleTANs issued in calls per day. Counts only.
struct OverviewController: Sendable {
    let database: PortalDatabase
    let overview: HotlineOverview
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/hotline/overview", access: .permission(.viewHotlineOverview))
            .get(use: show)
    }

    @Sendable func show(_ request: Request, context: PermittedContext) async throws -> Response {
        let time = now()
        let figures = try await overview.figures(now: time, on: database.database(logger: context.logger))
        let language = context.language
        let outcomes = ["open"] + CallOutcome.allCases.map(\.rawValue)
        return try renderer.page(OverviewPage(
            outcomes: outcomes.map { outcome in
                .init(label: renderer.text("hotline_outcome_\(outcome)", in: language),
                      today: figures.today[outcome] ?? 0, week: figures.week[outcome] ?? 0)
            },
            totalToday: figures.today.values.reduce(0, +), totalWeek: figures.week.values.reduce(0, +),
            callbacksWaiting: figures.callbacksWaiting,
            oldestWait: figures.oldestWaitingSince.map { DurationText.text(seconds: Int(time.timeIntervalSince($0)), in: language) },
            days: figures.teleTANsPerDay.map { .init(day: renderer.dayAndMonth($0.day, in: language), count: $0.count) }
        ), context: context)
    }
}
