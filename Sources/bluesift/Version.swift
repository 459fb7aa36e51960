import CBuildStamp

/// `bluesift --version`: the release number here, the commit stamped into the binary by
/// `make release` / `make install` (scripts/stamp_binary.py); a plain `swift build` says
/// "commit unknown".
enum BuildInfo {
    static let version = "0.1.0"
    static var commit: String { String(cString: bluesift_build_commit()) }
    static var line: String { "\(version) (commit \(commit))" }
}
