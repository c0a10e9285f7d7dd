import Audit
import Foundation
import TeleTAN

/// What an admin searches the audit trail for: every field optional, all given ones combined.
/// Built from the search form's query string, so a filtered URL can be shared between admins.
package struct AuditFilter: Sendable, Equatable {
    /// Compared without regard to case (`Alice` finds `alice`).
    package var actor: String?
    /// A prefix of the action: `hotline` finds every `hotline.*` entry.
    package var action: String?
    package var outcome: AuditEvent.Outcome?
    package var address: String?
    /// The whole subject to match (a bare call id already made `call:<id>`).
    package var subject: String?
    /// The subject as the results table shortens it (`call:1234567…`): the part before the
    /// ellipsis, matched against the start of the subject.
    package var subjectStart: String?
    /// The subject as typed, for the form and links; nil when set by code.
    package var subjectText: String?
    /// The admin's own `audit.view` entries are left out unless this is set (`own_views=show`).
    package var showOwnViews = false
    /// Whose page views to leave out (the signed-in admin; set by the search page, not parsed).
    package var hiddenViewer: String?
    /// The range as typed (a date, or a date and time), kept for the form and for links.
    package var fromText: String?
    package var toText: String?
    /// The range as instants: `from` inclusive, `to` exclusive (a date given as `To` means the
    /// whole of that day).
    package var from: Date?
    package var to: Date?

    package init() {}

    /// The query parameters of the search form, in a fixed order.
    static let fieldNames = ["actor", "action", "outcome", "from", "to", "address", "subject", "own_views"]

    /// What the query string held: the filter, the fields that cannot be searched for as typed,
    /// and the fields that held a teleTAN (left out of the filter, so that it is neither searched
    /// for, shown again nor written into the audit trail).
    package struct Parsed: Sendable, Equatable {
        package var filter = AuditFilter()
        package var invalid: [String] = []
        package var teleTANFields: [String] = []
        /// The first teleTAN taken out of a field, kept in memory only: its keyed fingerprint
        /// becomes the subject of the audit entry about the search (as a lookup's does).
        package var typedTeleTAN: TeleTAN?
        /// Actor held a teleTAN-shaped value: a username or a teleTAN, which ``TeleTANScreen``
        /// decides against the teleTANs this portal issued before anything is recorded.
        package var actorTeleTAN: TeleTAN?
    }

    /// Reads the filter from query parameters; empty fields are no filter. Dates are read in
    /// `timeZone` (the authority's), as `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM`. A teleTAN-shaped Actor
    /// stays in the filter for now: ten letters can be a username and a teleTAN at once, and only
    /// the database can tell (``TeleTANScreen``).
    package static func parse(_ query: [String: String], timeZone: TimeZone) -> Parsed {
        var parsed = Parsed()
        var filter = AuditFilter()
        var invalid: [String] = []
        func text(_ name: String) -> String? {
            guard let value = query[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
            guard value.count <= 200, !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                invalid.append(name)
                return nil
            }
            if let teleTAN = TeleTAN(value.filter { !$0.isWhitespace && $0 != "-" }) {
                guard name != "actor" else {
                    parsed.actorTeleTAN = teleTAN
                    return value
                }
                parsed.teleTANFields.append(name)
                if parsed.typedTeleTAN == nil { parsed.typedTeleTAN = teleTAN }
                return nil
            }
            return value
        }
        filter.actor = text("actor")
        filter.action = text("action")
        if let outcome = text("outcome") {
            if let value = AuditEvent.Outcome(rawValue: outcome) { filter.outcome = value } else { invalid.append("outcome") }
        }
        filter.address = text("address")
        if let subject = text("subject") {
            filter.subjectText = subject
            (filter.subject, filter.subjectStart) = Self.subjectMatch(subject)
        }
        if let ownViews = text("own_views") {
            if ownViews == "show" { filter.showOwnViews = true } else { invalid.append("own_views") }
        }
        if let from = text("from") {
            filter.fromText = from
            if let start = LocalTime.parse(from, timeZone: timeZone) { filter.from = start.start } else { invalid.append("from") }
        }
        if let to = text("to") {
            filter.toText = to
            if let end = LocalTime.parse(to, timeZone: timeZone) { filter.to = end.end } else { invalid.append("to") }
        }
        if let from = filter.from, let to = filter.to, from >= to, !invalid.contains("to") {
            invalid.append("to")
        }
        parsed.filter = filter
        parsed.invalid = invalid
        return parsed
    }

    /// A subject as an investigator copies it: shortened as in the table (`call:1234567…` or
    /// `...`) is matched by its start; a bare call id (a UUID) is the call's subject `call:<id>`.
    static func subjectMatch(_ typed: String) -> (whole: String?, start: String?) {
        for ellipsis in ["…", "..."] where typed.hasSuffix(ellipsis) && typed.count > ellipsis.count {
            return (nil, String(typed.dropLast(ellipsis.count)))
        }
        if UUID(uuidString: typed) != nil { return ("call:\(typed.lowercased())", nil) }
        if typed.lowercased().hasPrefix("call:"), UUID(uuidString: String(typed.dropFirst(5))) != nil { return (typed.lowercased(), nil) }
        return (typed, nil)
    }

    /// The filter as query parameters, for the paging and export links and the audit details.
    private var queryItems: [(name: String, value: String)] {
        let values: [String?] = [actor, action, outcome?.rawValue, fromText, toText, address, subjectText ?? subject, showOwnViews ? "show" : nil]
        return zip(Self.fieldNames, values).compactMap { name, value in value.map { (name, $0) } }
    }

    package var isEmpty: Bool { queryItems.isEmpty }

    /// `actor=a&action=b`, percent-encoded, without a leading `?`.
    package var queryString: String {
        queryItems.map { "\($0.name)=\(Self.encode($0.value))" }.joined(separator: "&")
    }

    static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~:")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

/// A date or a date and minute in the authority's time zone, as the form's date fields send it.
enum LocalTime {
    /// The instants the text stands for: a whole day, or one minute.
    static func parse(_ text: String, timeZone: TimeZone) -> (start: Date, end: Date)? {
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let day = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard day.count == 3, let year = day[0], let month = day[1], let dayOfMonth = day[2],
              (1970...9999).contains(year), parts[0].count == 10
        else { return nil }
        var components = DateComponents(year: year, month: month, day: dayOfMonth)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        if parts.count == 2 {
            let time = parts[1].split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard (2...3).contains(time.count), time.allSatisfy({ $0 != nil }), parts[1].count <= 8 else { return nil }
            components.hour = time[0]
            components.minute = time[1]
            components.second = time.count == 3 ? time[2] : 0
            guard (0...23).contains(components.hour!), (0...59).contains(components.minute!), (0...59).contains(components.second!) else { return nil }
        }
        guard let start = calendar.date(from: components),
              calendar.dateComponents([.year, .month, .day], from: start) == DateComponents(year: year, month: month, day: dayOfMonth)
        else { return nil }
        let end = parts.count == 2
            ? start.addingTimeInterval(components.second == 0 && parts[1].count == 5 ? 60 : 1)
            : calendar.date(byAdding: .day, value: 1, to: start)!
        return (start, end)
    }
}
