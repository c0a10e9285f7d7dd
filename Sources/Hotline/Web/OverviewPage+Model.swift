import Foundation
import PortalWeb

extension OverviewPage {
    /// The counts of `figures`, with the oldest waiting callback's wait as of `time`.
    init(figures: HotlineOverview.Figures, now time: Date, renderer: PageRenderer, language: Language) {
        let outcomes = ["open"] + CallOutcome.allCases.map(\.rawValue)
        self.init(
            outcomes: outcomes.map { outcome in
                Count(label: renderer.text("hotline_outcome_\(outcome)", in: language),
                      today: figures.today[outcome] ?? 0, week: figures.week[outcome] ?? 0)
            },
            totalToday: figures.today.values.reduce(0, +), totalWeek: figures.week.values.reduce(0, +),
            callbacksWaiting: figures.callbacksWaiting,
            oldestWait: figures.oldestWaitingSince.map { DurationText.text(seconds: Int(time.timeIntervalSince($0)), in: language) },
            days: figures.teleTANsPerDay.map { Day(day: renderer.dayAndMonth($0.day, in: language), count: $0.count) })
    }
}
