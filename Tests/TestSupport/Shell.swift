import Foundation

/// Runs a command for test set-up (resetting a PAM test account, say) and fails on a non-zero exit.
public enum Shell {
    public struct Failed: Error { public let status: Int32 }

    public static func run(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 { throw Failed(status: process.terminationStatus) }
    }
}
