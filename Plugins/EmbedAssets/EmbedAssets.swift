import Foundation
import PackagePlugin

/// Builds `Templates/` and `Public/` into the target that uses it, as `EmbeddedAssets.files`,
/// so that the portal binary needs no files beside it. Every file in the two folders is an
/// input: adding, changing or removing one regenerates the source.
@main
struct EmbedAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let folders = ["Templates", "Public"]
        var inputs: [URL] = []
        for folder in folders {
            let directory = root.appending(path: folder)
            guard let files = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]) else { continue }
            for case let file as URL in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                inputs.append(file)
            }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedAssetFiles.swift")
        return [.buildCommand(
            displayName: "Embedding \(inputs.count) template and static files",
            executable: try context.tool(named: "EmbedAssetsTool").url,
            arguments: [root.path, output.path] + folders,
            inputFiles: inputs,
            outputFiles: [output])]
    }
}
