/// Configuration problems found so far: `serve` stops at the first one, `check-config` reports
/// every one, so both read the flags through the same code.
package final class ConfigurationProblems {
    package private(set) var messages: [String] = []

    package init() {}

    package func add(_ message: String) {
        messages.append(message)
    }

    /// The value `body` makes, or nil after recording why it could not be made.
    package func check<T>(_ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch let error as ConfigurationError {
            add(error.message)
        } catch {
            add("\(error)")
        }
        return nil
    }

    /// Sets `target` to what `body` makes; keeps the default and records the problem otherwise.
    package func set<T>(_ target: inout T, _ body: () throws -> T) {
        if let value = check(body) { target = value }
    }

    /// Throws the first problem, for commands that stop there.
    package func throwFirst() throws {
        if let first = messages.first { throw ConfigurationError(message: first) }
    }
}
