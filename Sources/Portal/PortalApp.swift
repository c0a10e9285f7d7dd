import Audit
import AuditReview
import FluentKit
import Foundation
import Hummingbird
import HTTPSupport
import Hotline
import Issuance
import Logging
import PAMAuth
import PortalWeb
import ServiceLifecycle
import SignIn
import Storage
import TeleTAN
import Verification

/// The assembled portal: opens the database, runs every module's and feature's migrations,
/// loads the secret and the pages, and wires the web foundation and the features together.
/// `portal serve` runs it; tests build it the same way.
package final class PortalApp: Sendable {
    /// The features, in the order their routes and cleanup run.
    static let featureTypes: [any PortalFeature.Type] = [SignInFeature.self, IssuanceFeature.self, HotlineFeature.self, AuditReviewFeature.self]

    /// Every schema change, in order: the modules below the portal, the web foundation, then each
    /// feature's. Databases record them by name, so none is ever renamed or edited.
    package static let migrations: [any Migration] =
        [CreateRateLimitTables(), CreateAuditLog(), CreateTeleTANRecords(), AddRevocation(), AddCheckpointsAndRetention(), AddLockoutRefusals()]
        + WebFoundation.migrations + featureTypes.flatMap { $0.migrations }

    /// Every feature's texts together with the foundation's.
    package static let strings = StringTable.merged([WebFoundation.strings] + featureTypes.map { $0.strings })

    package let configuration: PortalConfiguration
    package let foundation: WebFoundation
    package let pam: PAMAuthenticator
    package let signIn: SignInFeature
    package let issuance: IssuanceFeature
    package let hotline: HotlineFeature
    package let auditReview: AuditReviewFeature
    package let integrity: AuditIntegrity
    /// The certs document on the metrics listener (`--verification-auth cwa`); nil: none.
    let certs: CertsRoute?
    let logger: Logger

    var features: [any PortalFeature] { [signIn, issuance, hotline, auditReview] }
    package var database: PortalDatabase { foundation.database }

    /// - Parameters:
    ///   - verification: the teleTAN source; nil for the embedded service.
    ///   - certs: the signing certificate a CWA verification server fetches from the metrics
    ///     listener; nil when the portal does not sign CWA tokens.
    package init(
        configuration: PortalConfiguration, logger: Logger, verification: (any VerificationService)? = nil,
        certs: CertsRoute? = nil, now: @escaping @Sendable () -> Date = Date.init
    ) async throws {
        self.configuration = configuration
        self.logger = logger
        self.certs = certs
        let keyring = try ServerKeyring(path: configuration.secretFile, now: now)
        let signer = try CheckpointSigner.loadOrCreate(keyFile: configuration.auditCheckpointKey)
        let assets = try AssetFiles.load(
            templatesDirectory: configuration.templatesDirectory, publicDirectory: configuration.publicDirectory)
        let database = try await PortalDatabase.openMigrated(
            location: configuration.database, poolSize: configuration.databasePoolSize, migrations: Self.migrations, logger: logger)
        do {
            foundation = try WebFoundation(
                database: database, assets: assets, strings: Self.strings, keyring: keyring,
                idleTimeout: configuration.idleTimeout, sessionLifetime: configuration.sessionLifetime,
                trustProxy: configuration.trustProxy, publicOrigin: configuration.publicOrigin, timeZone: configuration.timeZone,
                logger: logger, now: now)
        } catch {
            await database.shutdown()
            throw error
        }
        let verification = verification ?? EmbeddedVerificationService(
            hasher: foundation.hasher,
            globalLimit: EmbeddedVerificationService.defaultGlobalLimit(perHour: configuration.teleTANsPerHourGlobal),
            logger: logger, now: now)
        pam = PAMAuthenticator(configuration: PAMConfiguration(
            service: configuration.pamService, threads: configuration.pamThreads, responseTimeout: configuration.pamTimeout), logger: logger)
        signIn = SignInFeature(foundation: foundation, pam: pam, settings: configuration.signInSettings, landing: HotlineFeature.landing)
        issuance = IssuanceFeature(
            foundation: foundation, verification: verification, settings: configuration.issuanceSettings,
            calls: HotlineFeature.callSummaries)
        hotline = HotlineFeature(foundation: foundation, issuance: issuance, settings: configuration.hotlineSettings)
        // Earlier checkpoint keys (`portal audit rotate-key`) still vouch for the checkpoints they signed.
        integrity = AuditIntegrity(
            signer: signer, checkpointInterval: configuration.auditCheckpointInterval, retention: configuration.auditRetention,
            fullCheckInterval: configuration.auditFullCheckInterval, publicKeys: try CheckpointSigner.publicKeys(forKeyFile: configuration.auditCheckpointKey))
        auditReview = AuditReviewFeature(foundation: foundation, verification: verification, integrity: integrity)
    }

    package func makeRouter() -> Router<PortalRequestContext> {
        foundation.makeRouter(features: features)
    }

    /// The metrics listener's routes (and the certs document, if the portal signs CWA tokens).
    package func makeMetricsRouter() -> Router<BasicRequestContext> {
        foundation.makeMetricsRouter(certs: certs, sharedState: { [self] in await sharedState() })
    }

    /// What the alert rules watch that no single request shows (docs/deploy/alerts.yml): the
    /// database, the audit trail's last verification and checkpoint, which any instance may
    /// have made, and today's daily quotas. Five small queries per scrape (today's quota rows
    /// are made first if the periodic work has not made them yet). The chain counts as intact
    /// only while the last full check did not find it broken too: a check of new entries cannot
    /// see below its start.
    func sharedState() async -> PortalMetrics.SharedState {
        guard await database.isReachable(logger: logger) else { return .init(databaseReachable: false) }
        let db = database.database(logger: logger)
        let verification = try? await integrity.lastVerification(on: db)
        let fullBroken = (try? await integrity.lastFullVerification(on: db))?.isIntact == false
        let checkpoint = try? await integrity.latestCheckpoint(on: db)
        let quotas = (try? await issuance.issuer.quotas.prepare(at: foundation.now(), on: db)) ?? []
        return .init(
            databaseReachable: true, lastVerification: verification.map { (intact: $0.isIntact && !fullBroken, at: $0.verifiedAt) },
            lastCheckpoint: checkpoint?.signedAt,
            dailyQuotas: quotas.map { .init(scope: $0.scope, limit: $0.limit, used: $0.used) })
    }

    /// The routes and their access declarations, without the 405 answers (tests read them).
    package func makeRoutes() -> (router: Router<PortalRequestContext>, routes: DeclaredRoutes) {
        foundation.makeRoutes(features: features)
    }

    /// The public listener, the metrics listener and the cleanup, stopped together on SIGTERM
    /// or SIGINT: first the drain period (`/health/ready` answers 503, requests are still
    /// served), then the listeners close and requests under way finish.
    package func run() async throws {
        try await makeServiceGroup(handlingSignals: true).run()
    }

    /// The services of ``run()``; tests trigger the graceful shutdown themselves (`handlingSignals: false`).
    package func makeServiceGroup(handlingSignals: Bool) -> ServiceGroup {
        let app = Application(
            router: makeRouter(),
            server: .http1(configuration: HTTPServerDefaults.http1),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            logger: logger)
        let metrics = Application(
            router: makeMetricsRouter(),
            server: .http1(configuration: HTTPServerDefaults.http1),
            configuration: .init(address: .hostname(configuration.metricsHost, port: configuration.metricsPort), serverName: nil),
            logger: logger)
        let drain = ShutdownDrain(readiness: foundation.readiness, period: configuration.shutdownDrain, logger: logger)
        // Stopped in reverse order, each after the one before has returned: the drain first.
        return ServiceGroup(configuration: .init(
            services: [app, metrics, foundation.makeCleanupService(features: features), drain],
            gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [], logger: logger))
    }

    /// Runs the cleanup once; tests use it instead of waiting for the timer.
    package func runCleanup() async throws {
        try await foundation.runCleanup(features: features)
    }

    package func shutdown() async {
        await pam.shutdown()
        await database.shutdown()
    }
}

extension PortalConfiguration {
    var signInSettings: SignInFeature.Settings {
        var settings = SignInFeature.Settings()
        settings.roleGroups = roleGroups
        settings.failuresPerUser = signInFailuresPerUser
        settings.failuresPerAddress = signInFailuresPerAddress
        settings.window = signInWindow
        settings.lockout = signInLockout
        settings.failureTime = signInFailureTime
        return settings
    }

    var issuanceSettings: IssuanceFeature.Settings {
        var settings = IssuanceFeature.Settings()
        settings.minimumInterval = teleTANMinimumInterval
        settings.perUserPerDay = teleTANsPerUserPerDay
        settings.displayTime = teleTANDisplayTime
        settings.healthAuthorities = healthAuthorities
        settings.eventApprovalByTwo = eventApprovalByTwo
        settings.dailyQuota = dailyQuota
        return settings
    }

    var hotlineSettings: HotlineFeature.Settings {
        var settings = HotlineFeature.Settings()
        settings.checks = hotlineChecks
        settings.callbackRetention = callbackRetention
        settings.callbackNumbers = callbackNumbers
        return settings
    }
}
