import Foundation

extension PluginLoader {
    /// What one path named on the command line (`plugins check`, `plugins test`) loaded.
    public struct PathLoad: Sendable {
        public var path: String
        /// A folder, read as `--plugins` reads one (duplicate ids within it are errors).
        public var isFolder: Bool
        public var plugins: [Plugin] = []
        public var errors: [PluginError] = []
        /// A folder without a plugin file (nothing loaded, nothing failed).
        public var emptyFolder: Bool { isFolder && plugins.isEmpty && errors.isEmpty }
        /// Nothing loaded, or something failed.
        public var failed: Bool { !errors.isEmpty || plugins.isEmpty }
    }

    /// Each path as a plugin file or a folder of them, in order.
    public static func load(paths: [String]) -> [PathLoad] {
        paths.map { f in
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: f, isDirectory: &isDir), isDir.boolValue {
                let loaded = load(directories: [f])
                return PathLoad(path: f, isFolder: true, plugins: loaded.plugins, errors: loaded.errors)
            }
            do throws(PluginError) {
                let p = try load(file: f)
                return PathLoad(path: f, isFolder: false, plugins: [p])
            } catch {
                return PathLoad(path: f, isFolder: false, errors: [error])
            }
        }
    }
}
