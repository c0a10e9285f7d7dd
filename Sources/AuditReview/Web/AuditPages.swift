import PortalWeb

/// One entry as a row of the search results.
struct EntryItem: TemplateValues {
    let seq: String
    let time: String
    let timeISO: String
    let actor: String?
    let action: String
    /// As stored (`success`), for the row's class; `outcomeLabel` in the page's language.
    let outcome: String
    let outcomeLabel: String
    /// The role in the page's language.
    let roleLabel: String?
    let address: String?
    /// The subject, shortened for the table (the entry page shows it whole).
    let subjectShort: String?
    /// `key=value, ...` with the keys in the page's language and times in the authority's zone.
    let details: String
    /// `key=value, ...` as stored, for tools reading the page.
    let rawDetails: String
}

/// A choice in a select field.
struct Option: TemplateValues {
    let value: String
    let label: String
    let selected: Bool
}

/// The last run of the chain check and the newest signed checkpoint, on the search page.
struct IntegrityBox: TemplateValues {
    struct LastRun: TemplateValues {
        let time: String
        let scope: String
        let range: String
        let intact: Bool
        /// Nothing was there to check (no entry after the last checkpoint): not "intact, 0".
        let nothingYet: Bool
        let brokenSeq: String?
        let problem: String?
    }
    struct Checkpoint: TemplateValues {
        let seq: String
        let time: String
        let keyID: String
    }
    let lastRun: LastRun?
    let checkpoint: Checkpoint?
    /// The newest full check when the last run was a check of new entries: a broken one stays
    /// in view (checks of new entries start above what it found) until a later full check passes.
    var lastFull: LastRun? = nil
}

/// `/admin/audit`: the search form, the results, the teleTAN lookup, export links and the chain.
struct SearchPage: PageModel {
    /// The search form as it was sent: its own values, apart from the entries' fields of the same
    /// names (`actor`, `address`), and which fields could not be read.
    struct Form: TemplateValues {
        let actor: String
        let action: String
        let outcomes: [Option]
        let from: String
        let to: String
        let address: String
        let subject: String
        let showOwnViews: Bool
        /// The fields that could not be read, and those that held an issued teleTAN.
        let invalid: [String]
        let teleTANFields: [String]

        func derivedValue(named name: String) -> any TemplateValue {
            switch name {
            case "invalidActor": invalid.contains("actor")
            case "invalidAction": invalid.contains("action") || teleTANFields.contains("action")
            case "invalidFrom": invalid.contains("from")
            case "invalidTo": invalid.contains("to")
            case "invalidAddress": invalid.contains("address") || teleTANFields.contains("address")
            case "invalidSubject": invalid.contains("subject") || teleTANFields.contains("subject")
            case "invalidOutcome": invalid.contains("outcome") || invalid.contains("own_views")
            default: .undeclared
            }
        }
    }

    static let template = "audit/search"
    let titleKey = "audit_title"
    let form: Form
    let knownActions: [String]
    /// The fields that could not be read, as one message; nil when all were fine.
    let filterError: String?
    let entries: [EntryItem]
    let tableID = "audit-results"
    let tableLabel = "results-heading"
    let filtered: Bool
    let olderLink: String?
    let newerLink: String?
    let newestLink: String?
    let csvLink: String
    let jsonlLink: String
    let lookupError: String?
    let integrity: IntegrityBox
    let verifyNotice: String?
}

/// `/admin/audit/entries/{seq}`: every field of one entry and links to its neighbours.
struct EntryPage: PageModel {
    struct Detail: TemplateValues {
        let key: String
        let value: String
    }
    static let template = "audit/entry"
    let titleKey = "audit_entry_title"
    /// The fields the results table shows too.
    let entry: EntryItem
    let requestID: String?
    /// Whole (the table shortens it).
    let subject: String?
    let details: [Detail]
    let previousHash: String
    let hash: String
    let actorLink: String?
    let subjectLink: String?
    /// A teleTAN's fingerprint as subject: the lookup page of that teleTAN.
    let teleTANLink: String?
    let previousLink: String?
    let nextLink: String
}

/// `/admin/audit/teletans/{fingerprint}`: what the lookup found.
struct TeleTANPage: PageModel {
    static let template = "audit/teletan"
    let titleKey = "audit_teletan_title"
    let found: Bool
    let issuedAt: String?
    let issuedBy: String?
    let issuanceLink: String?
    let type: String?
    let validUntil: String?
    let status: String
    let statusKey: String
    let callLink: String?
    let entries: [EntryItem]
    let tableID = "teletan-entries"
    let tableLabel = "teletan-entries-heading"
    let subjectLink: String
}

/// `/admin/audit/charts`.
struct ChartsPage: PageModel {
    struct Chart: TemplateValues {
        let id: String
        let heading: String
        let svg: String
        let table: ChartTable
    }
    struct ChartTable: TemplateValues {
        let caption: String
        let firstColumn: String
        let columns: [String]
        let rows: [TableRow]
    }
    struct TableRow: TemplateValues {
        let label: String
        let cells: [String]
    }
    static let template = "audit/charts"
    let titleKey = "audit_charts_title"
    let charts: [Chart]
    let timeZone: String
}

/// `/admin/sessions`.
struct SessionsPage: PageModel {
    struct Item: TemplateValues {
        let handle: String
        let username: String
        let roles: String
        let since: String
        let lastSeen: String
        let address: String
        let isOwn: Bool
    }
    static let template = "audit/sessions"
    let titleKey = "admin_sessions_title"
    let items: [Item]
    let notice: String?
}

/// `/admin/lockouts`.
struct LockoutsPage: PageModel {
    struct Item: TemplateValues {
        let scope: String
        let scopeLabel: String
        let key: String
        let until: String
        /// Failed sign-ins since the last successful one, from the audit trail.
        let failures: String
        /// For a username the addresses tried from, for an address the names typed.
        let others: String
        let lastAttempt: String
        /// The search for the sign-ins behind the lock.
        /// nil for a teleTAN-shaped name: a teleTAN typed as a username must not go into a URL.
        let entriesLink: String?
    }
    static let template = "audit/lockouts"
    let titleKey = "admin_lockouts_title"
    let items: [Item]
    let notice: String?
}
