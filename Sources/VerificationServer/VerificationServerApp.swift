import Audit
import Foundation
import FluentKit
import Hummingbird
import HTTPSupport
import HummingbirdCore
import Logging
import ServiceAuth
import ServiceLifecycle
import Storage
import TeleTAN
import Verification

/// The standalone verification server: the same teleTAN code the portal embeds
/// (``EmbeddedVerificationService``, ``TeleTANLifecycle``) served over the CWA v1 API on two
/// listeners.
package final class VerificationServerApp: Sendable {
    package static let migrations: [any Migration] = [
        CreateRateLimitTables(), CreateAuditLog(), CreateTeleTANRecords(), CreateLifecycleRecords(), AddRevocation(),
        AddLockoutRefusals(),
    ]

    package let configuration: ServerConfiguration
    package let database: PortalDatabase
    let logger: Logger
    let hasher: KeyedHasher
    let tokens: PortalTokenVerifier
    let realms: TrustedRealms
    /// Only with realms to trust (its HTTP client must be shut down).
    let certsFetcher: (any RealmCertsFetching)?
    let metrics = ServerMetrics()
    let now: @Sendable () -> Date

    /// `certsFetcher`: how trusted realms' certs documents are fetched (default: HTTP, see
    /// ``HTTPCertsFetcher``); tests give their own.
    package init(configuration: ServerConfiguration, logger: Logger, now: @escaping @Sendable () -> Date = Date.init,
                 certsFetcher: (any RealmCertsFetching)? = nil) async throws {
        self.configuration = configuration
        self.logger = logger
        self.now = now
        hasher = KeyedHasher(keyring: try ServerKeyring(path: configuration.secretFile, now: now))
        tokens = try await PortalTokenVerifier(publicKeyPaths: configuration.trustedPortalKeys, audience: configuration.audience)
        database = try await PortalDatabase.openMigrated(
            location: configuration.database, poolSize: configuration.databasePoolSize, migrations: Self.migrations, logger: logger)
        // Last: nothing may throw once the fetcher's HTTP client exists.
        let fetcher = configuration.trustedRealms.isEmpty ? nil : certsFetcher ?? HTTPCertsFetcher()
        self.certsFetcher = fetcher
        realms = TrustedRealms(realms: fetcher.map { fetcher in
            configuration.trustedRealms.map { TrustedRealm(url: $0, fetcher: fetcher, logger: logger, now: now) }
        } ?? [])
    }

    var lifecycle: TeleTANLifecycle { TeleTANLifecycle(hasher: hasher, now: now) }

    /// The app-facing listener: registration token, TAN, test result; health.
    package func makeAppRouter() -> Router<ServerRequestContext> {
        // HEAD wherever GET is: load balancers probe the health endpoints with either.
        let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Errors padded like the success and dummy bodies: by size, a failed real request looks
        // like a dummy's answer.
        router.add(middleware: CWARequestMiddleware(trustProxy: configuration.trustProxy, padsErrors: true))
        AppAPIController(
            database: database, lifecycle: lifecycle,
            guessing: GuessingProtection(
                slowdownAfter: configuration.guessSlowdownAfter, lockoutAfter: configuration.guessLockoutAfter,
                window: configuration.guessWindow, lockout: configuration.guessLockout, now: now),
            hasher: hasher, metrics: metrics
        ).addRoutes(to: router)
        router.get("/health/live") { _, _ in "ok\n" }
        router.get("/health/ready") { [database] _, context -> Response in
            let ready = await database.isReachable(logger: context.logger)
            return Response(status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: ready ? "ok\n" : "database unreachable\n")))
        }
        router.addMethodNotAllowedResponses(headWhereGet: true)
        return router
    }

    /// The internal listener: teleTAN creation (portals) and TAN verification (submission server).
    package func makeInternalRouter() -> Router<ServerRequestContext> {
        // HEAD wherever GET is (only /metrics here), as on the app-facing listener.
        let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)
        if let tls = configuration.internalTLS, tls.requiresClientCertificate {
            router.add(middleware: ClientCertificateMiddleware(allowedThumbprints: tls.allowedClientThumbprints))
        }
        // `--trust-proxy` is for the app-facing listener behind a load balancer; clients of the
        // internal listener (portals, submission server) connect directly and cannot set the
        // address its audit records.
        router.add(middleware: CWARequestMiddleware(trustProxy: false, padsErrors: false))
        InternalAPIController(
            database: database,
            service: EmbeddedVerificationService(
                hasher: hasher, globalLimit: EmbeddedVerificationService.defaultGlobalLimit(perHour: configuration.teleTANsPerHour),
                logger: logger, now: now),
            lifecycle: lifecycle, tokens: BearerTokenVerifier(portals: tokens, realms: realms, now: now),
            audit: AuditLog(), hasher: hasher, metrics: metrics, now: now
        ).addRoutes(to: router)
        // Here, not on the app-facing listener: counters that move only for real redemptions
        // would let anyone on the internet tell an app's real requests from its dummies.
        router.get("/metrics") { [metrics] _, _ in metrics.render() }
        router.addMethodNotAllowedResponses(headWhereGet: true)
        return router
    }

    /// HTTP/1.1, over TLS when configured (certificate files are read here, at start-up).
    package func makeAppServer() throws -> HTTPServerBuilder {
        try configuration.appTLS?.serverBuilder() ?? .http1(configuration: HTTPServerDefaults.http1)
    }

    package func makeInternalServer() throws -> HTTPServerBuilder {
        try configuration.internalTLS?.serverBuilder() ?? .http1(configuration: HTTPServerDefaults.http1)
    }

    /// Both listeners and the retention job, stopped together on SIGTERM or SIGINT.
    package func run() async throws {
        let app = Application(
            router: makeAppRouter(), server: try makeAppServer(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            logger: logger)
        let internalApp = Application(
            router: makeInternalRouter(), server: try makeInternalServer(),
            configuration: .init(address: .hostname(configuration.internalHost, port: configuration.internalPort), serverName: nil),
            logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [app, internalApp, RetentionService(lifecycle: lifecycle, database: database, logger: logger)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    package func shutdown() async {
        await certsFetcher?.shutdown()
        await database.shutdown()
    }
}

/// Hourly deletion of rows older than 21 days; one instance at a time (advisory lock).
struct RetentionService: Service {
    let lifecycle: TeleTANLifecycle
    let database: PortalDatabase
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do {
                        try await lifecycle.purgeExpired(on: database.database(logger: logger))
                    } catch {
                        logger.warning("retention run failed", metadata: ["error": "\(String(reflecting: type(of: error)))"])
                    }
                    try await Task.sleep(for: .seconds(3600))
                }
            }
        } catch is CancellationError {}
    }
}
