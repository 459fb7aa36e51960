// swift-tools-version:6.0
// Layers, lowest first; each target depends only on targets above it in this list.
//   1 wire      BluesiftWire        byte reader/writer, UUIDs, typed errors, field sinks
//   1 security  BluesiftSecurity    AES-CMAC, SMP crypto toolbox, AES-CCM (swift-crypto), vendor ciphers
//   1 codecs    BluesiftCodecs      LC3 (liblc3) and SBC (libsbc) encode/decode, WAV files
//   2 capture   BluesiftCapture     btsnoop / pcap / pcapng / PacketLogger readers and writers;
//                                   compressed files, bug reports (btsnooz), merged and growing files
//   3 protocols BluesiftProtocols   HCI, ACL->L2CAP, L2CAP, ATT, SMP, advertising, link layer
//   4 GATT      BluesiftGATT        per-device databases rebuilt from discovery, naming
//   5 plugins   BluesiftPlugins     declarative vendor dissectors (YAML): GATT, Classic, advertising data
//   5 dissect   BluesiftDissect     field trees, renderers, capture statistics (stats)
//   5¼ session  BluesiftSession     one capture read once: source, decode settings, filter
//   5¼ audio    BluesiftAudio       LE Audio and A2DP streams of a session decoded to WAV files
//   5½ report   BluesiftReport      self-contained HTML report of a capture or a replay
//   6 live      BluesiftTransport   H4 over TCP/UNIX/serial, HCI user channel (+ CBluetooth headers)
//               BluesiftHost        minimal LE central: scan, connect, L2CAP, ATT client, SMP pairing
//   7 replay    BluesiftReplay      replay scripts, live replay, capture diff
//   7½ fuzz     BluesiftDeviceFuzz  `bluesift fuzz`: a recorded session mutated through its plugins, sent to a device
//   8 CLI       bluesift
//   fuzzing     BluesiftFuzz (harness library) + FuzzCapture (layer 2), FuzzStack (layers 3-5),
//               FuzzPlugins (plugin engine): libFuzzer under `make fuzz`, file replay otherwise
import PackageDescription

let package = Package(
    name: "bluesift",
    platforms: [.macOS(.v13)],
    products: [
        // The analyzer as a library: it never imports a transport, so it runs anywhere.
        .library(name: "Bluesift", targets: ["BluesiftWire", "BluesiftCapture", "BluesiftProtocols", "BluesiftGATT", "BluesiftPlugins", "BluesiftDissect", "BluesiftSession"]),
        .executable(name: "bluesift", targets: ["bluesift"]),
        // Live links to controllers (layer 6): transports and a minimal LE central.
        .library(name: "BluesiftLive", targets: ["BluesiftTransport", "BluesiftHost"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", exact: "0.9.20"),
        // Latency percentiles in `stats` (HdrHistogram).
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0")
    ],
    targets: [
        .systemLibrary(
            name: "CPcap", path: "Sources/CPcap", pkgConfig: "libpcap",
            providers: [.apt(["libpcap-dev"])]),
        // Debian's zlib, liblzma, libzstd, libbz2: compressed captures, btsnooz sections.
        .systemLibrary(
            name: "CCompression", path: "Sources/CCompression",
            providers: [.apt(["zlib1g-dev", "liblzma-dev", "libzstd-dev", "libbz2-dev"])]),
        // Debian's liblc3 and libsbc: `bluesift audio` decodes LE Audio's LC3 and A2DP's SBC.
        .systemLibrary(
            name: "CAudioCodecs", path: "Sources/CAudioCodecs",
            providers: [.apt(["liblc3-dev", "libsbc-dev"])]),
        .target(name: "BluesiftWire"),
        .target(name: "BluesiftCodecs", dependencies: ["BluesiftWire", "CAudioCodecs"]),
        // AES-CMAC, SMP's c1/s1/f4-f6/g2/ah, AES-CCM: shared by the host's pairing and the
        // decoder's decryption of sniffed links.
        .target(
            name: "BluesiftSecurity",
            dependencies: [
                "BluesiftWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto")
            ]),
        .target(
            name: "BluesiftCapture",
            dependencies: [
                "BluesiftWire", "CPcap", "CCompression",
                .product(name: "ZIPFoundation", package: "ZIPFoundation")
            ]),
        .target(name: "BluesiftProtocols", dependencies: ["BluesiftWire", "BluesiftCapture", "BluesiftSecurity"]),
        .target(name: "BluesiftGATT", dependencies: ["BluesiftWire", "BluesiftCapture", "BluesiftProtocols"]),
        .target(name: "BluesiftPlugins", dependencies: ["BluesiftWire", "BluesiftProtocols", "BluesiftSecurity", .product(name: "Yams", package: "Yams")]),
        .target(
            name: "BluesiftDissect",
            dependencies: [
                "BluesiftWire", "BluesiftCapture", "BluesiftProtocols", "BluesiftGATT", "BluesiftPlugins", "BluesiftSecurity",
                .product(name: "Histogram", package: "hdrhistogram-swift")
            ]),
        // One HTML file per capture or replay report: above dissect, never imports transport.
        .target(name: "BluesiftSession", dependencies: ["BluesiftWire", "BluesiftSecurity", "BluesiftCapture", "BluesiftProtocols", "BluesiftGATT", "BluesiftPlugins", "BluesiftDissect"]),
        .target(name: "BluesiftAudio", dependencies: ["BluesiftWire", "BluesiftCapture", "BluesiftProtocols", "BluesiftDissect", "BluesiftSession", "BluesiftCodecs"]),
        .target(name: "BluesiftReport", dependencies: ["BluesiftWire", "BluesiftCapture", "BluesiftProtocols", "BluesiftGATT", "BluesiftPlugins", "BluesiftDissect", "BluesiftSession"]),
        // Header-only (constants and struct layouts): no libbluetooth at run time.
        .systemLibrary(name: "CBluetooth", path: "Sources/CBluetooth"),
        .target(name: "BluesiftTransport", dependencies: ["BluesiftWire", "BluesiftCapture", "CBluetooth"]),
        .target(name: "BluesiftHost", dependencies: ["BluesiftWire", "BluesiftSecurity", "BluesiftCapture", "BluesiftProtocols", "BluesiftTransport"]),
        .target(name: "BluesiftReplay", dependencies: ["BluesiftWire", "BluesiftSecurity", "BluesiftCapture", "BluesiftProtocols", "BluesiftGATT", "BluesiftPlugins", "BluesiftDissect", "BluesiftSession", "BluesiftHost", "BluesiftTransport"]),
        // `bluesift fuzz`: mutated variants of a recorded session sent to a live device (above replay).
        .target(
            name: "BluesiftDeviceFuzz",
            dependencies: ["BluesiftWire", "BluesiftProtocols", "BluesiftGATT", "BluesiftPlugins", "BluesiftReplay"]),
        // The git commit `bluesift --version` shows, written into the linked binary by make.
        .target(name: "CBuildStamp"),
        .executableTarget(
            name: "bluesift",
            dependencies: [
                "BluesiftReplay", "BluesiftDeviceFuzz", "BluesiftReport", "BluesiftSession", "BluesiftAudio", "CBuildStamp", "BluesiftSecurity",
                "BluesiftDissect", "BluesiftCapture", "BluesiftPlugins", "BluesiftGATT", "BluesiftHost", "BluesiftTransport",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]),
        // Fuzzing (docs/fuzzing.md). CFuzzer only declares libFuzzer's driver entry point.
        .systemLibrary(name: "CFuzzer", path: "Sources/CFuzzer"),
        .target(name: "BluesiftFuzz", dependencies: ["BluesiftWire", "BluesiftCapture", "CCompression", "BluesiftProtocols", "BluesiftGATT", "BluesiftPlugins", "BluesiftDissect"]),
        .executableTarget(name: "FuzzCapture", dependencies: ["BluesiftFuzz", "CFuzzer"]),
        .executableTarget(name: "FuzzStack", dependencies: ["BluesiftFuzz", "CFuzzer"]),
        .executableTarget(name: "FuzzPlugins", dependencies: ["BluesiftFuzz", "CFuzzer"]),
        .testTarget(name: "BluesiftWireTests", dependencies: ["BluesiftWire"]),
        .testTarget(name: "BluesiftSecurityTests", dependencies: ["BluesiftSecurity"]),
        .testTarget(
            name: "BluesiftCaptureTests",
            dependencies: [
                "BluesiftCapture", "CCompression",
                .product(name: "ZIPFoundation", package: "ZIPFoundation")
            ]),
        .testTarget(name: "BluesiftProtocolsTests", dependencies: ["BluesiftProtocols", "BluesiftCapture", "BluesiftSecurity", "BluesiftWire"]),
        .testTarget(name: "BluesiftDissectTests", dependencies: ["BluesiftDissect", "BluesiftCapture", "BluesiftGATT", "BluesiftSecurity", "BluesiftWire"]),
        .testTarget(name: "BluesiftReplayTests", dependencies: ["BluesiftReplay", "BluesiftPlugins", "BluesiftTransport", "BluesiftHost"]),
        .testTarget(
            name: "BluesiftDeviceFuzzTests",
            dependencies: ["BluesiftDeviceFuzz", "BluesiftReplay", "BluesiftPlugins", "BluesiftGATT", "BluesiftWire"]),
        .testTarget(name: "BluesiftTransportTests", dependencies: ["BluesiftTransport"]),
        .testTarget(name: "BluesiftPluginsTests", dependencies: ["BluesiftPlugins", "BluesiftWire", "BluesiftCapture", "BluesiftProtocols", "BluesiftGATT", "BluesiftDissect"]),
        .testTarget(name: "BluesiftHostTests", dependencies: ["BluesiftHost", "BluesiftSecurity", "BluesiftProtocols"], exclude: ["Fixtures"]),
        .testTarget(name: "BluesiftCLITests", dependencies: ["BluesiftSecurity", "BluesiftCodecs"]),
        .testTarget(name: "BluesiftE2ETests", dependencies: []),
        .testTarget(name: "BluesiftConformanceTests", dependencies: ["BluesiftCapture", "BluesiftProtocols", "BluesiftGATT"]),
        .testTarget(name: "BluesiftMalformedTests", dependencies: ["BluesiftFuzz", "BluesiftWire", "BluesiftCapture", "BluesiftProtocols", "BluesiftPlugins", "BluesiftDissect"])
    ],
    swiftLanguageModes: [.v6]
)

// Tests that wait on child processes, files and sockets share Tests/TestEvents (waits on
// events, never on the clock).
package.targets.append(.target(name: "TestEvents", path: "Tests/TestEvents"))
for target in package.targets where ["BluesiftCLITests", "BluesiftMalformedTests", "BluesiftE2ETests", "BluesiftHostTests", "BluesiftTransportTests"].contains(target.name) {
    target.dependencies.append("TestEvents")
}
