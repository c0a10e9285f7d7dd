import Crypto
import Foundation
import Hummingbird
import HTTPSupport
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import NIOSSL
import TeleTAN

/// TLS for one listener, and optionally mutual TLS: the client's certificate is requested, and
/// requests whose certificate's SHA-256 thumbprint is not on the allow-list are refused with 401
/// by ``ClientCertificateMiddleware`` (as CWA's verification server did). The thumbprint is the
/// trust anchor, so the certificate chain itself is not validated against a CA; the TLS handshake
/// still proves that the client holds the certificate's private key.
package struct ListenerTLS: Sendable {
    package var certificateChainPath: String
    package var privateKeyPath: String
    /// Lower-case hex SHA-256 thumbprints of the DER certificates allowed to connect; empty means
    /// TLS without client certificates.
    package var allowedClientThumbprints: Set<String>

    package init(certificateChainPath: String, privateKeyPath: String, allowedClientThumbprints: Set<String> = []) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
        self.allowedClientThumbprints = allowedClientThumbprints
    }

    package var requiresClientCertificate: Bool { !allowedClientThumbprints.isEmpty }

    /// TLS 1.2 suites (BSI TR-02102-2): ECDHE only (forward secrecy) with AES-GCM. swift-nio-ssl's
    /// default list also offers CBC with SHA-1 and suites without ECDHE; ChaCha20-Poly1305 is
    /// not among TR-02102-2's suites either. TLS 1.3's suites are BoringSSL's own, all AEAD.
    static let tls12CipherSuites: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ]

    /// Accepts `AB:CD:…` (as `openssl x509 -fingerprint -sha256` prints it) or plain hex.
    package static func normalizedThumbprint(_ text: String) -> String? {
        let hex = text.replacingOccurrences(of: ":", with: "").lowercased()
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        return hex
    }

    package static func thumbprint(of certificate: NIOSSLCertificate) throws -> String {
        KeyedHasher.hex(SHA256.hash(data: try certificate.toDERBytes()))
    }

    package struct Failure: Error, CustomStringConvertible {
        package enum File: Sendable { case certificate, privateKey }
        /// Which file is wrong, so that the command can name its flag.
        package let file: File
        package let description: String
    }

    /// Loads the certificate and key now, so that a bad file stops start-up with a clear message.
    package func serverBuilder() throws -> HTTPServerBuilder {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateChainPath)
        } catch {
            throw Failure(file: .certificate, description: "cannot read a PEM certificate chain from '\(certificateChainPath)'")
        }
        do {
            key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
        } catch {
            throw Failure(file: .privateKey, description: "cannot read a PEM private key from '\(privateKeyPath)'")
        }
        guard !chain.isEmpty else { throw Failure(file: .certificate, description: "no certificate in '\(certificateChainPath)'") }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        tls.cipherSuiteValues = Self.tls12CipherSuites
        if requiresClientCertificate {
            // Ask for a certificate without making it mandatory in the handshake: a client without
            // one (or with an unknown one) gets a 401 answer it can read instead of a broken
            // connection. No CA store: the callback below decides, so none is needed (and a host
            // without a system CA bundle must not fail to start).
            tls.certificateVerification = .optionalVerification
            tls.trustRoots = .certificates([])
        }
        // Hummingbird builds the context only when the listener starts; build it now so that a key
        // that does not belong to the certificate stops start-up with a clear message.
        do {
            _ = try NIOSSLContext(configuration: tls)
        } catch {
            throw Failure(file: .privateKey, description: "the private key '\(privateKeyPath)' does not match the certificate '\(certificateChainPath)' or cannot be used")
        }
        guard requiresClientCertificate else {
            return try .tls(.http1(configuration: HTTPServerDefaults.http1), tlsConfiguration: tls)
        }
        return try .tls(.http1(configuration: HTTPServerDefaults.http1), configuration: TLSChannelConfiguration(
            tlsConfiguration: tls,
            customVerificationCallback: { _, promise in promise.succeed(.certificateVerified) }))
    }
}

/// Refuses (401) every request whose TLS client certificate is missing or not on the allow-list.
struct ClientCertificateMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let allowedThumbprints: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var thumbprint: String?
        var expired = false
        if let channel = context.channel, let certificate = try? await channel.nioSSL_peerCertificate().get() {
            thumbprint = try? ListenerTLS.thumbprint(of: certificate)
            // The chain is not validated (the thumbprint is the trust), but a pinned certificate
            // still ends when it expires.
            expired = certificate.notValidAfter < time(nil) || certificate.notValidBefore > time(nil)
        }
        guard let thumbprint, allowedThumbprints.contains(thumbprint), !expired else {
            context.logger.notice("client certificate refused", metadata: [
                "thumbprint": "\(thumbprint ?? "none")", "reason": "\(thumbprint == nil ? "none" : expired ? "expired" : "not allowed")",
            ])
            return CWARequestMiddleware.json(status: .unauthorized, ["status": .int(401), "error": .string("client certificate not allowed")])
        }
        var context = context
        context.clientCertificateThumbprint = thumbprint
        return try await next(request, context)
    }
}
