import Audit
import Crypto
import FluentKit
import Foundation
import HTTPSupport
import Hummingbird
import Logging
import ServiceLifecycle
import Storage
import TeleTAN

/// What every feature builds on: the database, sessions, CSRF tokens and form nonces, page
/// rendering, the audit trail, metrics, the clock; and the request pipeline the features' routes
/// sit in.
package struct WebFoundation: Sendable {
    /// The foundation's own schema changes, after those of the modules below it.
    package static let migrations: [any Migration] = [CreatePortalTables(), AddSessionAddress(), AddEndedSessions()]
    package static let strings = WebStrings.table

    package let database: PortalDatabase
    package let renderer: PageRenderer
    package let hasher: KeyedHasher
    /// The server secrets (hashing and sealing); the hasher and every sealer use it.
    package var keyring: ServerKeyring { hasher.keyring }
    package let sessions: SessionStore
    package let csrf: CSRF
    /// Decodes every state-changing form and checks its CSRF token.
    package let forms: FormCheck
    package let nonces: FormNonces
    package let audit = AuditLog()
    package let metrics = PortalMetrics()
    /// Turned off on SIGTERM (``ShutdownDrain``); `/health/ready` answers 503 from then on.
    package let readiness = Readiness()
    package let logger: Logger
    package let now: @Sendable () -> Date
    let assets: AssetFiles
    let trustProxy: Bool
    let publicOrigin: PublicOrigin

    package init(
        database: PortalDatabase, assets: AssetFiles, strings: StringTable, keyring: ServerKeyring,
        idleTimeout: Duration, sessionLifetime: Duration, trustProxy: Bool, publicOrigin: PublicOrigin, timeZone: TimeZone,
        logger: Logger,
        now: @escaping @Sendable () -> Date
    ) throws {
        self.database = database
        self.assets = assets
        hasher = KeyedHasher(keyring: keyring)
        renderer = try PageRenderer(assets: assets, strings: strings, timeZone: timeZone)
        sessions = SessionStore(hasher: hasher, idleTimeout: idleTimeout, lifetime: sessionLifetime)
        csrf = CSRF(hasher: hasher)
        nonces = FormNonces(hasher: hasher, lifetime: sessionLifetime)
        forms = FormCheck(csrf: csrf, nonces: nonces, now: now)
        self.trustProxy = trustProxy
        self.publicOrigin = publicOrigin
        self.logger = logger
        self.now = now
    }

    /// The request pipeline with the foundation's routes and every feature's, without the 405
    /// answers (the route x role test reads this table), and the routes' access declarations.
    package func makeRoutes(features: [any PortalFeature]) -> (router: Router<PortalRequestContext>, routes: DeclaredRoutes) {
        // HEAD wherever GET is (health checks, link checkers); GET pages with effects skip them on
        // HEAD (see the issuance feature's result page).
        let router = Router(context: PortalRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: DrainingMiddleware(readiness: readiness))
        router.add(middleware: ClientInfoMiddleware(trustProxy: trustProxy, publicOrigin: publicOrigin))
        router.add(middleware: RequestLogMiddleware(metrics: metrics))
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: ErrorPageMiddleware(renderer: renderer))
        router.add(middleware: BodyLimitMiddleware())
        router.add(middleware: HostCheckMiddleware(publicOrigin: publicOrigin))
        router.add(middleware: StaticFileGuardMiddleware())
        router.add(middleware: FileMiddleware(
            fileProvider: InMemoryFileProvider(files: assets.publicFiles, loadedAt: now()),
            cacheControl: .init([(.text, [.maxAge(3600)])]), searchForIndexHtml: false))
        router.add(middleware: OriginCheckMiddleware(publicOrigin: publicOrigin))
        router.add(middleware: SessionMiddleware(database: database, sessions: sessions, csrf: csrf, audit: audit, now: now))
        // A second error page layer inside the session lookup, so that error pages show who is
        // signed in (and Sign out); the outer one still answers when the session store fails, and
        // for "not found" (which must reach the static files first).
        router.add(middleware: ErrorPageMiddleware(renderer: renderer, passesNotFound: true))
        router.add(middleware: SignInRedirectMiddleware())

        let routes = DeclaredRoutes(router: router, database: database, audit: audit, forms: forms, now: now)
        OperationsRoutes(database: database, readiness: readiness).addRoutes(to: routes)
        for feature in features { feature.addRoutes(to: routes) }
        return (router, routes)
    }

    /// The metrics listener's routes: `GET /metrics` (Prometheus text) and, with
    /// `--verification-auth cwa`, the certs document a CWA verification server fetches
    /// (``CertsRoute``); nothing else. Its counters tell each sign-in's outcome and each
    /// issuance's time, so they are kept off the public listener (`--metrics-host`, loopback by
    /// default).
    /// `sharedState` is read before each scrape is rendered (``PortalMetrics/record(_:)``).
    package func makeMetricsRouter(
        certs: CertsRoute? = nil, sharedState: (@Sendable () async -> PortalMetrics.SharedState)? = nil
    ) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/metrics") { _, _ in
            if let sharedState { metrics.record(await sharedState()) }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.render())))
        }
        certs?.addRoute(to: router)
        return router
    }

    package func makeRouter(features: [any PortalFeature]) -> Router<PortalRequestContext> {
        let router = makeRoutes(features: features).router
        router.addMethodNotAllowedResponses(headWhereGet: true)
        return router
    }

    /// The periodic cleanup of the foundation and every feature, as a service.
    package func makeCleanupService(features: [any PortalFeature], interval: Duration = .seconds(60)) -> some Service {
        CleanupService(steps: cleanupSteps(features: features), interval: interval, logger: logger, now: now)
    }

    /// Runs the cleanup once; tests use it instead of waiting for the timer.
    package func runCleanup(features: [any PortalFeature]) async throws {
        try await CleanupService(steps: cleanupSteps(features: features), interval: .seconds(60), logger: logger, now: now).runOnce()
    }

    private func cleanupSteps(features: [any PortalFeature]) -> [@Sendable (Date) async throws -> Void] {
        let db = database.database(logger: logger)
        return [{ time in try await runOwnPeriodicWork(now: time, on: db) }]
            + features.map { feature in { time in try await feature.runPeriodicWork(now: time, on: db) } }
    }

    /// Expired sessions (each audited once), used form nonces too old to be accepted anyway, and
    /// spent rate-limit counters and locks.
    private func runOwnPeriodicWork(now time: Date, on db: any Database) async throws {
        try await db.transaction { tx in
            for expired in try await sessions.removeExpired(now: time, on: tx) {
                try await audit.append(AuditEvent(action: .sessionExpired, outcome: .success, actor: expired.username), at: time, on: tx)
            }
        }
        try await nonces.purge(olderThan: time.addingTimeInterval(-(nonces.lifetime + FormNonces.clockSkewAllowance * 2).seconds), on: db)
        try await RateLimiter().purge(before: time, on: db)
        try await db.transaction { tx in
            for ended in try await Lockouts().purge(before: time, on: tx) where ended.refused > 1 {
                try await audit.append(Self.refusalSummary(ended), at: time, on: tx)
            }
        }
    }

    /// What a sign-in lock refused, in one entry when it ends (the first refusal has an entry of its
    /// own): a storm against a locked name or address then cannot fill the audit trail.
    package static func refusalSummary(_ lock: Lockouts.EndedLock) -> AuditEvent {
        AuditEvent(
            action: .signIn, outcome: .failure, actor: lock.scope == "user" ? lock.key : nil,
            address: lock.scope == "address" ? lock.key : nil,
            details: ["reason": "throttled", "scope": lock.scope, "refused": String(lock.refused)])
    }
}
