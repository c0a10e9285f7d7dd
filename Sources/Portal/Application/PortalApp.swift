import Audit
import Crypto
import FluentKit
import Foundation
import Hummingbird
import HTTPSupport
import Logging
import Mustache
import PAMAuth
import ServiceLifecycle
import Storage
import TeleTAN
import Verification

/// The assembled portal: opens the database, runs migrations, loads the secret and templates,
/// and wires the controllers. `portal serve` runs it; tests build it the same way.
public final class PortalApp: Sendable {
    public static let migrations: [any Migration] = [
        CreateRateLimitTables(), CreateAuditLog(), CreateTeleTANRecords(), CreatePortalTables(),
    ]

    public let configuration: PortalConfiguration
    public let database: PortalDatabase
    public let pam: PAMAuthenticator
    let logger: Logger
    let now: @Sendable () -> Date
    let hasher: KeyedHasher
    let serverSecret: SymmetricKey
    let renderer: PageRenderer
    let metrics = PortalMetrics()
    let verification: any VerificationService

    /// - Parameter verification: the teleTAN source; nil for the embedded service.
    public init(
        configuration: PortalConfiguration, logger: Logger, verification: (any VerificationService)? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) async throws {
        self.configuration = configuration
        self.logger = logger
        self.now = now
        serverSecret = try SecretFile.loadOrCreate(at: configuration.secretFile)
        hasher = KeyedHasher(key: serverSecret)
        renderer = PageRenderer(
            library: try await MustacheLibrary(directory: configuration.templatesDirectory), publicDirectory: configuration.publicDirectory)
        database = try await PortalDatabase.openMigrated(
            location: configuration.database, poolSize: configuration.databasePoolSize, migrations: Self.migrations, logger: logger)
        self.verification = verification ?? EmbeddedVerificationService(
            hasher: hasher,
            globalLimit: EmbeddedVerificationService.defaultGlobalLimit(perHour: configuration.teleTANsPerHourGlobal),
            logger: logger, now: now)
        pam = PAMAuthenticator(configuration: PAMConfiguration(service: configuration.pamService, threads: configuration.pamThreads), logger: logger)
    }

    var sessions: SessionStore {
        SessionStore(hasher: hasher, idleTimeout: configuration.idleTimeout, lifetime: configuration.sessionLifetime)
    }
    var csrf: CSRF { CSRF(hasher: hasher) }
    var throttle: SignInThrottle {
        SignInThrottle(
            failuresPerUser: configuration.signInFailuresPerUser, failuresPerAddress: configuration.signInFailuresPerAddress,
            window: configuration.signInWindow, lockout: configuration.signInLockout)
    }
    var nonces: FormNonces { FormNonces(hasher: hasher, lifetime: configuration.sessionLifetime) }
    var displays: PendingDisplays { PendingDisplays(serverSecret: serverSecret) }
    var audit: AuditLog { AuditLog() }

    public func makeRouter() -> Router<PortalRequestContext> {
        let router = makeRoutes()
        router.addMethodNotAllowedResponses(headWhereGet: true)
        return router
    }

    /// The routes and their middleware, without the 405 answers (tests list the routes from it).
    func makeRoutes() -> Router<PortalRequestContext> {
        // HEAD wherever GET is (health checks, link checkers); the two GET pages with effects
        // skip them on HEAD (see TeleTANController).
        let router = Router(context: PortalRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: ClientInfoMiddleware(trustProxy: configuration.trustProxy))
        router.add(middleware: RequestLogMiddleware(metrics: metrics))
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: ErrorPageMiddleware(renderer: renderer))
        router.add(middleware: StaticFileGuardMiddleware())
        router.add(middleware: FileMiddleware(configuration.publicDirectory, cacheControl: .init([(.text, [.maxAge(3600)])]), searchForIndexHtml: false, logger: logger))
        router.add(middleware: OriginCheckMiddleware())
        router.add(middleware: SessionMiddleware(database: database, sessions: sessions, csrf: csrf, audit: audit, now: now))
        // A second error page layer inside the session lookup, so that error pages show who is
        // signed in (and Sign out); the outer one still answers when the session store fails, and
        // for "not found" (which must reach the static files first).
        router.add(middleware: ErrorPageMiddleware(renderer: renderer, passesNotFound: true))
        router.add(middleware: SignInRedirectMiddleware())

        let authorization = Authorization(database: database, csrf: csrf, audit: audit, now: now)
        SignInController(
            database: database, pam: pam, roleGroups: configuration.roleGroups, sessions: sessions,
            throttle: throttle,
            csrf: csrf, audit: audit, renderer: renderer, metrics: metrics, now: now
        ).addRoutes(to: router)
        TeleTANController(
            database: database, authorization: authorization,
            issuer: TeleTANIssuer(
                database: database, service: verification, nonces: nonces, displays: displays, audit: audit, hasher: hasher,
                minimumInterval: configuration.teleTANMinimumInterval, perDay: configuration.teleTANsPerUserPerDay,
                metrics: metrics, now: now),
            nonces: nonces, displays: displays, renderer: renderer, displayTime: configuration.teleTANDisplayTime, now: now
        ).addRoutes(to: router)
        OperationsController(database: database, metrics: metrics).addRoutes(to: router)
        return router
    }

    /// The periodic cleanup, as a service for the application's service group.
    public func makeCleanupService(interval: Duration = .seconds(60)) -> some Service {
        CleanupService(
            database: database, sessions: sessions, nonces: nonces, displays: displays, audit: audit,
            displayTime: configuration.teleTANDisplayTime, interval: interval, logger: logger, now: now)
    }

    public func makeApplication() -> some ApplicationProtocol {
        Application(
            router: makeRouter(),
            server: .http1(configuration: HTTPServerDefaults.http1),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: [makeCleanupService()],
            logger: logger)
    }

    /// Runs the cleanup once; tests use it instead of waiting for the timer.
    public func runCleanup() async throws {
        try await CleanupService(
            database: database, sessions: sessions, nonces: nonces, displays: displays, audit: audit,
            displayTime: configuration.teleTANDisplayTime, interval: .seconds(60), logger: logger, now: now
        ).runOnce()
    }

    public func shutdown() async {
        await pam.shutdown()
        await database.shutdown()
    }
}
