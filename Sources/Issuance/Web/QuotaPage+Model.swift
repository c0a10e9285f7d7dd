import Foundation
import PortalWeb

extension QuotaPage {
    /// Today's `rows` (one per scope) and `raises`, with the raise form as typed and what is
    /// wrong with it.
    init(
        rows: [DailyQuotas.Row], raises: [DailyQuotas.Raise], authorities: HealthAuthorities, form: Form, problem: Problem?,
        notice: String?, resetsAt: Date, renderer: PageRenderer, language: Language
    ) {
        let name = { (scope: String) -> String in
            if scope == DailyQuotas.portalScope { return renderer.text("quota_scope_portal", in: language) }
            let id = String(scope.dropFirst(DailyQuotas.scope(ofHealthAuthority: "").count))
            return authorities.find(id)?.name ?? id
        }
        let error: String? = switch problem {
        case .scope: renderer.text("quota_error_scope", in: language)
        case .amount: renderer.text("quota_error_amount", in: language, ["max": String(DailyQuotas.largestRaise)])
        case .reason(let refused): renderer.text("quota_error_reason_\(refused.rawValue)", in: language, ["max": String(ShortText.maximumLength)])
        case nil: nil
        }
        self.init(
            items: rows.map { row in
                Item(
                    scope: row.scope, name: name(row.scope), quota: row.quota, extra: row.extra, limit: row.limit, used: row.used, left: row.left,
                    how: row.predicted.map { renderer.text("quota_how_predicted", in: language, ["days": String(row.basisDays.count), "predicted": String($0)]) }
                        ?? renderer.text("quota_how_fixed", in: language),
                    basis: row.basisDays.map { Day(day: $0.day.text, issued: $0.issued) })
            },
            raises: raises.map {
                Raise(name: name($0.scope), amount: $0.amount, reason: $0.reason, raisedBy: $0.raised_by,
                      raisedAt: renderer.dateTime($0.raised_at, in: language))
            },
            options: rows.map { Option(scope: $0.scope, name: name($0.scope), selected: $0.scope == form.scope) },
            form: form, maxAmount: DailyQuotas.largestRaise, maxReason: ShortText.maximumLength,
            resetsAt: renderer.dateTime(resetsAt, in: language), notice: notice, problem: problem, error: error)
    }
}
