import Foundation

/// Runs a command for test set-up (resetting a PAM test account, say) and fails on a non-zero exit.
package enum Shell {
    package struct Failed: Error { package let status: Int32 }

    package static func run(_ arguments: String...) throws {
        _ = try run(arguments, capture: false)
    }

    /// Runs the command and returns what it printed on standard output.
    package static func output(_ arguments: String...) throws -> String {
        try run(arguments, capture: true)
    }

    private static func run(_ arguments: [String], capture: Bool) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        if capture { process.standardOutput = pipe }
        try process.run()
        let data = capture ? pipe.fileHandleForReading.readDataToEndOfFile() : Data()
        process.waitUntilExit()
        if process.terminationStatus != 0 { throw Failed(status: process.terminationStatus) }
        return String(decoding: data, as: UTF8.self)
    }
}
