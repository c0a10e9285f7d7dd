import AccessControl
import Audit
import Foundation
import Hummingbird
import PortalWeb
import Storage

/// `/admin/audit/charts`: teleTANs issued, refusals and failed sign-ins per hour (48 hours) and
/// per day (90 days), and teleTANs per user per day (14 days), each as SVG with its table.
struct ChartsController: Sendable {
    let database: PortalDatabase
    let statistics: AuditStatistics
    let audit: AuditLog
    let renderer: PageRenderer
    let now: @Sendable () -> Date
    /// Users shown in the per-user chart (those who issued most); the table below the chart has all.
    let usersCharted = 15

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/admin/audit/charts", access: .permission(.reviewAuditTrail))
            .get(use: show)
    }

    @Sendable func show(_ request: Request, context: PermittedContext) async throws -> Response {
        let acting = context.acting
        let db = database.database(logger: context.logger)
        let time = now()
        let language = context.language
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = renderer.timeZone
        let thisHour = Date(timeIntervalSince1970: (time.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
        let hours = (0..<48).map { thisHour.addingTimeInterval(Double($0 - 47) * 3600) }
        let today = calendar.startOfDay(for: time)
        let days = (0..<90).compactMap { calendar.date(byAdding: .day, value: $0 - 89, to: today) }
        let since = min(hours[0], days[0])

        var hourly: [AuditStatistics.Series: [Int]] = [:]
        var daily: [AuditStatistics.Series: [Int]] = [:]
        for series in AuditStatistics.Series.allCases {
            let counts = try await statistics.perHour(series, since: since, on: db)
            hourly[series] = hours.map { counts[$0] ?? 0 }
            var perDay = [Date: Int]()
            for (hour, count) in counts { perDay[calendar.startOfDay(for: hour), default: 0] += count }
            daily[series] = days.map { perDay[$0] ?? 0 }
        }
        let userDays = Array(days.suffix(14))
        var perUser = [String: [Int]]()
        for item in try await statistics.issuedPerUserPerHour(since: userDays[0], on: db) {
            guard let index = userDays.firstIndex(of: calendar.startOfDay(for: item.hour)) else { continue }
            perUser[item.user, default: Array(repeating: 0, count: userDays.count)][index] += item.count
        }
        let users = perUser.keys.sorted { (perUser[$0]!.reduce(0, +), $1) > (perUser[$1]!.reduce(0, +), $0) }

        try await audit.appendView("charts", of: request, by: acting, at: time, on: db)
        return try renderer.page(ChartsPage(
            hours: hours, hourly: hourly, days: days, daily: daily, userDays: userDays, perUser: perUser, users: users,
            usersCharted: usersCharted, calendar: calendar, renderer: renderer, language: language), context: context)
    }
}
