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
        let names = AuditStatistics.Series.allCases.map { renderer.text("audit_series_\($0.rawValue)", in: language) }
        let hourLabel = { (date: Date) in self.hourText(date, calendar: calendar) }
        let dayLabel = { (date: Date) in renderer.dayAndMonth(date, in: language) }
        func chart(id: String, heading: String, points: [Date], values: [AuditStatistics.Series: [Int]],
                   label: (Date) -> String, every: Int, firstColumn: String) -> ChartsPage.Chart {
            let series = AuditStatistics.Series.allCases.enumerated().map { SVGChart.Series(name: names[$0.offset], values: values[$0.element] ?? []) }
            return .init(
                id: id, heading: heading,
                svg: SVGChart.lines(
                    title: heading, series: series,
                    labels: points.indices.filter { $0 % every == 0 || $0 == points.count - 1 }.map { ($0, label(points[$0])) }, id: id),
                table: .init(
                    caption: heading, firstColumn: firstColumn, columns: names,
                    rows: points.indices.reversed().map { index in
                        .init(label: label(points[index]), cells: series.map { String($0.values[index]) })
                    }))
        }
        let hourChart = chart(
            id: "per-hour", heading: renderer.text("audit_chart_hourly", in: language), points: hours, values: hourly,
            label: { "\(renderer.dayAndMonth($0, in: language)) \(hourLabel($0))" }, every: 6,
            firstColumn: renderer.text("audit_col_hour", in: language))
        let dayChart = chart(
            id: "per-day", heading: renderer.text("audit_chart_daily", in: language), points: days, values: daily,
            label: dayLabel, every: 15, firstColumn: renderer.text("audit_col_day", in: language))
        let charted = Array(users.prefix(usersCharted))
        let userHeading = renderer.text("audit_chart_per_user", in: language)
        let userChart = ChartsPage.Chart(
            id: "per-user", heading: userHeading,
            svg: SVGChart.heatmap(
                title: userHeading, rows: charted, columns: userDays.map(dayLabel), values: charted.map { perUser[$0]! }, id: "per-user"),
            table: .init(
                caption: userHeading, firstColumn: renderer.text("audit_col_user", in: language), columns: userDays.map(dayLabel),
                rows: users.map { .init(label: $0, cells: perUser[$0]!.map(String.init)) }))
        return try renderer.page(ChartsPage(
            charts: [hourChart, dayChart, userChart], timeZone: renderer.timeZone.identifier), context: context)
    }

    private func hourText(_ date: Date, calendar: Calendar) -> String {
        String(format: "%02d:00", calendar.component(.hour, from: date))
    }
}
