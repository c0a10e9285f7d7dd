/// Why a request was refused with 403 or 421, for the log line the error page middleware writes
/// (the page itself says nothing this specific). Never a token, cookie or form value: only which
/// check failed and, for the address checks, the header a browser sent and what was expected.
package enum RefusalReason {
    /// A header value as it may appear in a log line: printable ASCII only (anything else becomes
    /// "?", so a crafted header cannot forge a line), at most 100 characters.
    package static func quoted(_ value: String?) -> String {
        guard let value else { return "(none)" }
        let printable = String(value.unicodeScalars.prefix(100).map { $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
        return "'\(printable)'" + (value.unicodeScalars.count > 100 ? "..." : "")
    }
}
