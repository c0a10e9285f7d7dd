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
        return try renderer.page(OverviewPage(figures: figures, now: time, renderer: renderer, language: context.language
        ), context: context)
    }
}
