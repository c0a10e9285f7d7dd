// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "teletan-portal",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "portal", targets: ["PortalCommand"]),
        .executable(name: "verification-server", targets: ["VerificationServerCommand"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.9.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        // Already in the build for FluentKit; named to recognise its connection-pool timeout.
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.22.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // Already built for AsyncHTTPClient and PostgresNIO; named for TLS on our own listeners.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // libpam, from Debian's libpam0g-dev.
        .systemLibrary(name: "CPAM", path: "Sources/CPAM", providers: [.apt(["libpam0g-dev"])]),
        // prctl and dl_iterate_phdr, which Swift's Glibc module does not export.
        .target(name: "CLinux"),
        // Sign-in through PAM and roles from Unix groups.
        .target(name: "PAMAuth", dependencies: [
            "CPAM", "CLinux",
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The teleTAN format, its check character and keyed hashing: no I/O.
        .target(name: "TeleTAN", dependencies: [
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Database setup (SQLite or PostgreSQL) and database-backed primitives (rate windows).
        .target(name: "Storage", dependencies: [
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "AsyncKit", package: "async-kit"),
            .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
            .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The append-only, hash-chained audit trail.
        .target(name: "Audit", dependencies: [
            "Storage", "TeleTAN",
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The teleTAN lifecycle behind the VerificationService boundary.
        .target(name: "Verification", dependencies: [
            "TeleTAN", "Storage",
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Portal → verification server authentication: ES256 keys and short-lived JWTs, and CWA's
        // format (RS256 with an X.509 certificate published in Keycloak's certs format).
        .target(name: "ServiceAuth", dependencies: [
            "TeleTAN",
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "CryptoExtras", package: "swift-crypto"),
            .product(name: "X509", package: "swift-certificates"),
        ]),
        // Roles, permissions and the one table between them; who acts (for domain code). No HTTP.
        .target(name: "AccessControl", dependencies: [
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The portal's client of a standalone verification server (HTTP, JWT, client TLS).
        .target(name: "VerificationClient", dependencies: [
            "Verification", "ServiceAuth", "TeleTAN",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Templates/ and Public/, built into the binary by the EmbedAssets plugin.
        .target(name: "PortalAssets", plugins: ["EmbedAssets"]),
        .plugin(name: "EmbedAssets", capability: .buildTool(), dependencies: ["EmbedAssetsTool"]),
        .executableTarget(name: "EmbedAssetsTool"),
        // The portal's web foundation: request context and pipeline, sessions, CSRF and form
        // nonces, access declarations, page rendering, operations routes, the feature protocol.
        .target(name: "PortalWeb", dependencies: [
            "AccessControl", "Audit", "Storage", "TeleTAN", "HTTPSupport", "PortalAssets",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
            .product(name: "Mustache", package: "swift-mustache"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Feature: sign-in through PAM, throttling, sign-out.
        .target(name: "SignIn", dependencies: [
            "PortalWeb", "AccessControl", "PAMAuth", "Audit", "Storage",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "FluentKit", package: "fluent-kit"),
        ]),
        // Feature: issuing TEST teleTANs, shown once.
        .target(name: "Issuance", dependencies: [
            "PortalWeb", "AccessControl", "Audit", "Storage", "TeleTAN", "Verification",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Feature: hotline calls, the callback queue, read-back and the overview.
        .target(name: "Hotline", dependencies: [
            "PortalWeb", "Issuance", "AccessControl", "Audit", "Storage", "TeleTAN",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Feature: the admins' audit review (search, lookup, export, charts, tamper evidence),
        // sessions and lockouts.
        .target(name: "AuditReview", dependencies: [
            "PortalWeb", "Issuance", "AccessControl", "Audit", "Storage", "TeleTAN", "Verification",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "FluentKit", package: "fluent-kit"),
        ]),
        // The portal: wires the web foundation and the features together.
        .target(name: "Portal", dependencies: [
            "PortalWeb", "SignIn", "Issuance", "Hotline", "AuditReview", "AccessControl", "PAMAuth", "TeleTAN", "Storage", "Audit", "Verification",
            "HTTPSupport",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The standalone verification server (CWA v1 API) over the same Verification code.
        .target(name: "VerificationServer", dependencies: [
            "Verification", "Storage", "Audit", "TeleTAN", "ServiceAuth", "HTTPSupport", "AccessControl",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // HTTP details both services share: 405 with `Allow` for a defined path's other methods,
        // listener settings (idle timeout).
        .target(name: "HTTPSupport", dependencies: [
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        // Option parsing, exit codes and the release version shared by the two executables.
        .target(name: "CommandSupport", dependencies: [
            "Storage", "TeleTAN", "Audit", "CLinux",
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], plugins: ["GitCommit"]),
        // The git commit for `--version` (Release.swift), recorded before every build.
        .plugin(name: "GitCommit", capability: .buildTool()),
        .executableTarget(name: "VerificationServerCommand", dependencies: [
            "VerificationServer", "Storage", "TeleTAN", "CommandSupport",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "PortalCommand", dependencies: [
            "Portal", "PortalWeb", "Issuance", "Hotline", "VerificationClient", "Audit", "Storage", "TeleTAN", "CommandSupport",
            "ServiceAuth",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // Shared by the test targets: the databases every suite runs against, a settable clock.
        .target(name: "TestSupport", dependencies: [
            "Storage",
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/TestSupport"),
        .testTarget(name: "TeleTANTests", dependencies: ["TeleTAN"]),
        .testTarget(name: "PAMAuthTests", dependencies: [
            "PAMAuth", "TestSupport", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "AuditTests", dependencies: [
            "Audit", "Storage", "Verification", "TeleTAN", "TestSupport",
            .product(name: "FluentKit", package: "fluent-kit"),
        ]),
        .testTarget(name: "VerificationServerTests", dependencies: [
            "VerificationServer", "Verification", "ServiceAuth", "TeleTAN", "Storage", "TestSupport", "Audit",
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "CryptoExtras", package: "swift-crypto"),
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ]),
        .testTarget(name: "PortalTests", dependencies: [
            "Portal", "PortalWeb", "SignIn", "Issuance", "AuditReview", "AccessControl", "VerificationClient", "PAMAuth",
            "Audit", "Storage", "Verification", "TeleTAN", "TestSupport", "VerificationServer", "ServiceAuth",
            .product(name: "AsyncKit", package: "async-kit"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "FluentKit", package: "fluent-kit"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ]),
    ]
)
