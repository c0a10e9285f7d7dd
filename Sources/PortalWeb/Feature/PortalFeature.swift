import FluentKit
import Foundation

/// One feature of the portal (sign-in, issuance, hotline, audit review): its schema
/// changes, its texts, its routes with their access declarations, and its share of the periodic
/// cleanup. `PortalApp` wires the features together; a new feature is one more conforming type.
package protocol PortalFeature: Sendable {
    /// The feature's numbered schema changes, oldest first. A shipped migration is never edited.
    static var migrations: [any Migration] { get }
    /// The texts of the feature's pages, German and English.
    static var strings: StringTable { get }
    /// Adds the feature's routes, each in a group that declares its access.
    func addRoutes(to routes: DeclaredRoutes)
    /// Deletes what the feature keeps only for a while. Runs once a minute on every instance at
    /// once, so every step must be a conditional statement that does no harm when repeated.
    func runPeriodicWork(now: Date, on db: any Database) async throws
}

extension PortalFeature {
    package static var migrations: [any Migration] { [] }
    package func runPeriodicWork(now: Date, on db: any Database) async throws {}
}
