// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "herald", targets: ["herald"]),
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .library(name: "HeraldTelemetry", targets: ["HeraldTelemetry"]),
        .library(name: "HeraldStorage", targets: ["HeraldStorage"]),
        .library(name: "HeraldDelivery", targets: ["HeraldDelivery"]),
        .library(name: "HeraldHTTP", targets: ["HeraldHTTP"]),
        .library(name: "HeraldServer", targets: ["HeraldServer"]),
        .library(name: "HeraldProtocol", targets: ["HeraldProtocol"]),
        .library(name: "HeraldGateway", targets: ["HeraldGateway"]),
        .library(name: "HeraldXMPP", targets: ["HeraldXMPP"]),
        .library(name: "HeraldClient", targets: ["HeraldClient"]),
        .library(name: "HeraldAPNs", targets: ["HeraldAPNs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.0.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.25.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.30.0"),
    ],
    targets: [
        .target(
            name: "HeraldCore",
            dependencies: [],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldTelemetry",
            dependencies: [.product(name: "CoreMetrics", package: "swift-metrics")],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldProtocol",
            dependencies: [
                "HeraldCore",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Generated/README.md"],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldStorage",
            dependencies: [
                "HeraldCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldDelivery",
            dependencies: [
                "HeraldCore",
                "HeraldTelemetry",
                "HeraldStorage",
                "HeraldProtocol",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldGateway",
            dependencies: [
                "HeraldCore",
                "HeraldXMPP",
                "HeraldTelemetry",
                "HeraldStorage",
                "HeraldDelivery",
                "HeraldProtocol",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldXMPP",
            dependencies: ["HeraldCore"],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldClient",
            dependencies: [
                "HeraldCore",
                "HeraldProtocol",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldHTTP",
            dependencies: [
                "HeraldCore",
                "HeraldTelemetry",
                "HeraldStorage",
                "HeraldDelivery",
                "HeraldProtocol",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldServer",
            dependencies: [
                "HeraldCore",
                "HeraldTelemetry",
                "HeraldStorage",
                "HeraldDelivery",
                "HeraldHTTP",
                "HeraldGateway",
                "HeraldConsole",
                "HeraldAPNs",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldConsole",
            dependencies: [
                "HeraldCore",
                "HeraldDelivery",
                "HeraldStorage",
                "HeraldHTTP",
                "HeraldAPNs",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldTools",
            dependencies: [
                "HeraldCore",
                "HeraldProtocol",
                "HeraldClient",
                "HeraldXMPP",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldAPNs",
            dependencies: [
                "HeraldCore",
                "HeraldProtocol",
                "HeraldStorage",
                "HeraldTelemetry",
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldAPNsTests",
            dependencies: [
                "HeraldAPNs",
                "HeraldCore",
                "HeraldProtocol",
                "HeraldStorage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldAPNs",
                "HeraldCore",
                "HeraldStorage",
                "HeraldConsole",
                "HeraldDelivery",
                "HeraldHTTP",
                "HeraldServer",
                "HeraldTools",
                "HeraldClient",
                "HeraldGateway",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HeraldTestSupport",
            dependencies: ["HeraldCore", "HeraldStorage", .product(name: "Logging", package: "swift-log")],
            path: "Tests/HeraldTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldCoreTests",
            dependencies: ["HeraldCore"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldStorageTests",
            dependencies: [
                "HeraldTestSupport",
                "HeraldCore", "HeraldTelemetry", "HeraldStorage", "HeraldDelivery", "HeraldProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldDeliveryTests",
            dependencies: [
                "HeraldTestSupport",
                "HeraldCore", "HeraldTelemetry", "HeraldStorage", "HeraldDelivery",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldServerTests",
            dependencies: [
                "HeraldTestSupport",
                "HeraldCore", "HeraldStorage", "HeraldHTTP", "HeraldServer",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldProtocolTests",
            dependencies: [
                "HeraldCore", "HeraldProtocol", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldXMPPTests",
            dependencies: ["HeraldCore", "HeraldXMPP"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldGatewayTests",
            dependencies: [
                "HeraldTestSupport",
                "HeraldCore",
                "HeraldStorage",
                "HeraldDelivery",
                "HeraldProtocol",
                "HeraldGateway",
                "HeraldHTTP",
                "HeraldServer",
                "HeraldClient",
                "HeraldTools",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "HeraldHTTPTests",
            dependencies: [
                "HeraldTestSupport",
                "HeraldCore",
                "HeraldDelivery",
                "HeraldStorage",
                "HeraldHTTP",
                "HeraldServer",
                "HeraldGateway",
                "HeraldConsole",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
