import Foundation
import PortalWeb

extension ChartsPage {
    /// The charts of the counts per series per hour (`hourly`, one per `hours`) and per day
    /// (`daily`, one per `days`), and of the teleTANs per user per day (`perUser`, one per
    /// `userDays`; `users` the most active first, the first `usersCharted` of them charted).
    init(
        hours: [Date], hourly: [AuditStatistics.Series: [Int]], days: [Date], daily: [AuditStatistics.Series: [Int]],
        userDays: [Date], perUser: [String: [Int]], users: [String], usersCharted: Int, calendar: Calendar,
        renderer: PageRenderer, language: Language
    ) {
        let names = AuditStatistics.Series.allCases.map { renderer.text("audit_series_\($0.rawValue)", in: language) }
        let hourLabel = { (date: Date) in String(format: "%02d:00", calendar.component(.hour, from: date)) }
        let dayLabel = { (date: Date) in renderer.dayAndMonth(date, in: language) }
        func chart(id: String, heading: String, points: [Date], values: [AuditStatistics.Series: [Int]],
                   label: (Date) -> String, every: Int, firstColumn: String) -> Chart {
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
        let userChart = Chart(
            id: "per-user", heading: userHeading,
            svg: SVGChart.heatmap(
                title: userHeading, rows: charted, columns: userDays.map(dayLabel), values: charted.map { perUser[$0]! }, id: "per-user"),
            table: .init(
                caption: userHeading, firstColumn: renderer.text("audit_col_user", in: language), columns: userDays.map(dayLabel),
                rows: users.map { .init(label: $0, cells: perUser[$0]!.map(String.init)) }))
        self.init(charts: [hourChart, dayChart, userChart], timeZone: renderer.timeZone.identifier)
    }
}
