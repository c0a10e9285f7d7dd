import NIOSSL

/// The portal's TLS settings for an `https` verification server: an optional client
/// certificate (the server's mutual-TLS allow-list holds its SHA-256 thumbprint) and optional
/// trust roots (a private CA) instead of the system's.
package enum VerificationClientTLS {
    package struct Failure: Error, CustomStringConvertible {
        package enum Setting: Sendable { case certificate, privateKey, trustRoots }
        /// Which setting is wrong, so that the command can name its flag.
        package let setting: Setting
        package let description: String
    }

    package static func configuration(certificate: String?, privateKey: String?, trustRoots: String?) throws -> TLSConfiguration? {
        guard certificate != nil || privateKey != nil || trustRoots != nil else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        switch (certificate, privateKey) {
        case (nil, nil):
            break
        case let (certificate?, privateKey?):
            guard let chain = try? NIOSSLCertificate.fromPEMFile(certificate), !chain.isEmpty else {
                throw Failure(setting: .certificate, description: "cannot read a PEM certificate from '\(certificate)'")
            }
            guard let key = try? NIOSSLPrivateKey(file: privateKey, format: .pem) else {
                throw Failure(setting: .privateKey, description: "cannot read a PEM private key from '\(privateKey)'")
            }
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(key)
        case (_?, nil):
            throw Failure(setting: .privateKey, description: "a client certificate needs both the certificate and its private key")
        case (nil, _?):
            throw Failure(setting: .certificate, description: "a client certificate needs both the certificate and its private key")
        }
        if let trustRoots {
            guard let roots = try? NIOSSLCertificate.fromPEMFile(trustRoots), !roots.isEmpty else {
                throw Failure(setting: .trustRoots, description: "cannot read PEM certificates from '\(trustRoots)'")
            }
            tls.trustRoots = .certificates(roots)
        }
        // AsyncHTTPClient builds the context only when it connects; build it now so that a key
        // that does not belong to the certificate stops start-up instead of failing every issuance.
        do {
            _ = try NIOSSLContext(configuration: tls)
        } catch {
            throw Failure(setting: certificate == nil ? .trustRoots : .privateKey,
                          description: "the TLS settings cannot be used (does the private key belong to the certificate?)")
        }
        return tls
    }
}
