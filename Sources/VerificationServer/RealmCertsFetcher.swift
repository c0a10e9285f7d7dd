import AsyncHTTPClient
import Foundation
import NIOCore

/// Gets a realm's certs document. ``HTTPCertsFetcher`` in the server; tests give their own.
package protocol RealmCertsFetching: Sendable {
    /// The document's bytes; throws ``RealmCertsFetchFailure`` when there is none to be had.
    func certs(at url: String) async throws -> Data
    func shutdown() async
}

/// Why a certs document could not be had, for the operator's log line (never a token).
package struct RealmCertsFetchFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// GET with AsyncHTTPClient: HTTP or HTTPS (the system's trust store), 5 s at most, 1 MiB at most.
package final class HTTPCertsFetcher: RealmCertsFetching {
    static let timeout: TimeAmount = .seconds(5)
    static let maxBodySize = 1 << 20
    private let client: HTTPClient

    package init() {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: Self.timeout, read: Self.timeout)
        configuration.redirectConfiguration = .disallow
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    package func certs(at url: String) async throws -> Data {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: Self.timeout)
        } catch {
            throw RealmCertsFetchFailure("unreachable: \(error)")
        }
        guard response.status.code == 200 else {
            throw RealmCertsFetchFailure("answered \(response.status.code)")
        }
        do {
            return Data(buffer: try await response.body.collect(upTo: Self.maxBodySize))
        } catch {
            throw RealmCertsFetchFailure("body unreadable or over \(Self.maxBodySize) bytes")
        }
    }

    package func shutdown() async {
        try? await client.shutdown()
    }
}
