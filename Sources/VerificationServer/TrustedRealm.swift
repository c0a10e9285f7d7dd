import Foundation
import Logging

/// One Keycloak realm this server trusts (`--trusted-iam URL`): its signing keys, fetched from
/// `URL/auth/realms/cwa/protocol/openid-connect/certs` when first needed and cached.
///
/// The cache is fetched again when a token names a `kid` it does not hold, and when it is older
/// than ``maximumKeyAge`` (so a key removed from the realm stops being trusted). Fetches are
/// bounded: at most one started per ``minimumFetchInterval``, and requests arriving during a
/// fetch wait for it instead of starting their own, so a flood of tokens with made-up `kid`s
/// cannot make this server hammer the realm.
package actor TrustedRealm {
    /// Where CWA's verification server finds a realm's keys (`jwt.server` + this path).
    package static let certsPath = "/auth/realms/cwa/protocol/openid-connect/certs"

    package enum Lookup: Sendable {
        case key(RealmKey)
        /// The realm's current keys are known and none fits: the token is refused (401).
        case unknownKey
        /// No key fits and the realm could not be asked (or its last answer was unusable): the
        /// request cannot be decided now (503).
        case unavailable
    }

    /// The URL as configured (no trailing slash), for logs and audit details.
    package nonisolated let url: String
    package nonisolated let certsURL: String
    let minimumFetchInterval: TimeInterval
    let maximumKeyAge: TimeInterval
    private let fetcher: any RealmCertsFetching
    private let logger: Logger
    private let now: @Sendable () -> Date

    private var keys: [RealmKey] = []
    private var fetchedAt: Date?
    private var attemptedAt: Date?
    private var lastAttemptFailed = false
    private var inFlight: Task<Void, Never>?
    /// Fetches started so far (for tests and the start-up check).
    package private(set) var fetchCount = 0

    package init(url: String, fetcher: any RealmCertsFetching, logger: Logger, now: @escaping @Sendable () -> Date,
                 minimumFetchInterval: TimeInterval = 10, maximumKeyAge: TimeInterval = 300) {
        self.url = url
        certsURL = url + Self.certsPath
        self.fetcher = fetcher
        self.logger = logger
        self.now = now
        self.minimumFetchInterval = minimumFetchInterval
        self.maximumKeyAge = maximumKeyAge
    }

    /// `--trusted-iam`'s value as a base URL without a trailing slash: http or https, a host, no
    /// user or password, no query or fragment, and not already the certs document's URL.
    package static func normalizedURL(_ text: String) throws(RealmURLError) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let parts = URLComponents(string: trimmed), let scheme = parts.scheme?.lowercased(),
              scheme == "http" || scheme == "https", !(parts.host ?? "").isEmpty
        else { throw RealmURLError(description: "'\(text)' is not an http:// or https:// URL with a host") }
        guard parts.user == nil, parts.password == nil, parts.query == nil, parts.fragment == nil else {
            throw RealmURLError(description: "give the realm server's base URL without credentials, query or fragment")
        }
        var url = trimmed
        while url.hasSuffix("/") { url.removeLast() }
        guard !url.hasSuffix("/auth/realms/cwa") && !url.hasSuffix(certsPath) else {
            throw RealmURLError(description: "give the base URL (CWA's jwt.server); \(certsPath) is appended")
        }
        return url
    }

    package struct RealmURLError: Error, CustomStringConvertible {
        package let description: String
    }

    /// The key for a token's `kid`; without a `kid`, the realm's first key (which is the one the
    /// CWA verification server would take for every token).
    package func key(for kid: String?) async -> Lookup {
        let stale = fetchedAt.map { now().timeIntervalSince($0) >= maximumKeyAge } ?? true
        if stale || cached(kid) == nil {
            await fetchIfAllowed()
        }
        if let key = cached(kid) { return .key(key) }
        return fetchedAt == nil || lastAttemptFailed ? .unavailable : .unknownKey
    }

    private func cached(_ kid: String?) -> RealmKey? {
        guard let kid else { return keys.first }
        return keys.first { $0.kid == kid }
    }

    /// Joins the fetch under way, or starts one unless one started less than
    /// ``minimumFetchInterval`` ago.
    private func fetchIfAllowed() async {
        if let inFlight {
            await inFlight.value
            return
        }
        if let attemptedAt, now().timeIntervalSince(attemptedAt) < minimumFetchInterval { return }
        attemptedAt = now()
        fetchCount += 1
        let fetch = Task { await self.fetchAndStore() }
        inFlight = fetch
        await fetch.value
        inFlight = nil
    }

    private func fetchAndStore() async {
        do {
            let data = try await fetcher.certs(at: certsURL)
            let (found, skipped) = try await RealmCertsDocument.keys(from: data)
            keys = found
            fetchedAt = now()
            lastAttemptFailed = false
            if found.isEmpty || skipped > 0 {
                logger.warning("trusted IAM: keys without a usable RS256 certificate skipped", metadata: [
                    "realm": "\(url)", "usable_keys": "\(found.count)", "skipped_keys": "\(skipped)"])
            } else {
                logger.info("trusted IAM: signing keys fetched", metadata: ["realm": "\(url)", "keys": "\(found.count)"])
            }
        } catch {
            lastAttemptFailed = true
            logger.warning("trusted IAM unreachable: its certs document could not be fetched", metadata: [
                "realm": "\(url)", "reason": "\(error)", "cached_keys": "\(keys.count)"])
        }
    }
}
