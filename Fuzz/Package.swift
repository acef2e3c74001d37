// swift-tools-version:6.1
// libFuzzer targets for the parsers a client can reach, built on their own by scripts/fuzz
// (`swift build --sanitize fuzzer --sanitize address`), apart from the main package.
import PackageDescription

func fuzzer(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: dependencies)
}

let package = Package(
    name: "HeraldFuzz",
    dependencies: [.package(name: "Herald", path: "..")],
    targets: [
        fuzzer("FuzzMCS", [.product(name: "HeraldProtocol", package: "Herald")]),
        fuzzer("FuzzCheckin", [.product(name: "HeraldProtocol", package: "Herald")]),
        fuzzer("FuzzMessage", [.product(name: "HeraldCore", package: "Herald")]),
        fuzzer("FuzzCondition", [.product(name: "HeraldCore", package: "Herald")]),
        fuzzer("FuzzXMPP", [.product(name: "HeraldXMPP", package: "Herald")]),
    ],
    swiftLanguageModes: [.v6]
)
