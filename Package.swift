// swift-tools-version: 6.1
// The CoreTracker monorepo: every library, app, tool and test target in one manifest.
// Layout and dependency rules: ARCHITECTURE.md (checked by ../shared/tools/check-architecture).
import PackageDescription

let package = Package(
  name: "CoreTracker",
  // macOS 14: the collector's Hummingbird API is available from macOS 14; iOS apps keep iOS 15 for the
  // client products (the server targets are never built for iOS).
  platforms: [.macOS(.v14), .iOS(.v15), .tvOS(.v15), .watchOS(.v8)],
  products: [
    .library(name: "CoreTracker", targets: ["CoreTracker"]),
    .library(name: "CoreTrackerTesting", targets: ["CoreTrackerTesting"]),
    .library(name: "CollectorService", targets: ["CollectorService"]),
    .library(name: "CollectorWire", targets: ["CollectorWire"]),
    .library(name: "TrackingPlan", targets: ["TrackingPlan"]),
    .plugin(name: "TrackingPlanPlugin", targets: ["TrackingPlanPlugin"]),
    .library(name: "Delivery", targets: ["Delivery"]),
    .library(name: "DLProductDetail", targets: ["DLProductDetail"]),
    .library(name: "GA4Wire", targets: ["GA4Wire"]),
    .library(name: "WireJSON", targets: ["WireJSON"]),
    .library(name: "FirebaseService", targets: ["FirebaseService"]),
    .library(name: "MixpanelService", targets: ["MixpanelService"]),
    .library(name: "DLSellerProfile", targets: ["DLSellerProfile"]),
    .library(name: "DLTracker", targets: ["DLTracker"]),
    .library(name: "LogService", targets: ["LogService"]),
    .library(name: "MixpanelWire", targets: ["MixpanelWire"]),
    .library(name: "SimpleAnalyticsService", targets: ["SimpleAnalyticsService"]),
    .library(name: "ServiceSupport", targets: ["ServiceSupport"]),
    .library(name: "TYCheckout", targets: ["TYCheckout"]),
    .library(name: "TYProductDetail", targets: ["TYProductDetail"]),
    .library(name: "TYTracker", targets: ["TYTracker"]),
    .library(name: "CollectorStore", targets: ["CollectorStore"]),
    .library(name: "CollectorSQLite", targets: ["CollectorSQLite"]),
    .library(name: "CollectorPostgres", targets: ["CollectorPostgres"]),
    .library(name: "CollectorClickHouse", targets: ["CollectorClickHouse"]),
    .library(name: "CollectorIngest", targets: ["CollectorIngest"]),
    .library(name: "CollectorRuntime", targets: ["CollectorRuntime"]),
    .library(name: "CollectorVendors", targets: ["CollectorVendors"]),
    .library(name: "CollectorReports", targets: ["CollectorReports"]),
    .library(name: "CollectorDashboard", targets: ["CollectorDashboard"]),
    .library(name: "CollectorServer", targets: ["CollectorServer"]),
    .executable(name: "collector", targets: ["Collector"]),
    .executable(name: "shop-demo", targets: ["ShopDemo"]),
    .executable(name: "trackerctl", targets: ["trackerctl"]),
  ],
  // The `Server` trait (on by default) brings the collector's packages: an app that depends on this
  // package with `traits: []` resolves only what the client products need (swift-log).
  traits: [
    .trait(
      name: "Server",
      description: "The collector, its stores, trackerctl and shop-demo (Hummingbird, NIO, GRDB, postgres-nio, …)"),
    .default(enabledTraits: ["Server"]),
  ],
  dependencies: [
    .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
  ],
  targets: [
    // MARK: Core
    .target(name: "CoreTracker", path: "Packages/CoreTracker"),
    .testTarget(
      name: "CoreTrackerTests",
      dependencies: ["CoreTracker", "CoreTrackerTesting"],
      path: "Tests/CoreTrackerTests"
    ),
    .target(name: "CoreTrackerTesting", dependencies: ["CoreTracker"], path: "Packages/CoreTrackerTesting"),
    .testTarget(
      name: "CoreTrackerTestingTests",
      dependencies: ["CoreTracker", "CoreTrackerTesting"],
      path: "Tests/CoreTrackerTestingTests"
    ),

    // MARK: Delivery and wire formats
    .target(name: "Delivery", dependencies: ["CoreTracker"], path: "Packages/Delivery"),
    .testTarget(
      name: "DeliveryTests",
      dependencies: ["Delivery", "CoreTracker", "TestSupport"],
      path: "Tests/DeliveryTests"
    ),
    .target(name: "WireJSON", path: "Packages/Wire/WireJSON"),
    .target(
      name: "ServiceSupport", dependencies: ["CollectorWire", "CoreTracker", "Delivery", "TrackingPlan", "WireJSON"],
      path: "Packages/Services/ServiceSupport", resources: [.copy("PrivacyInfo.xcprivacy")]
    ),
    .testTarget(
      name: "ServiceSupportTests",
      dependencies: ["ServiceSupport", "CollectorWire", "CoreTracker", "Delivery", "TestSupport"],
      path: "Tests/ServiceSupportTests"
    ),
    .target(
      name: "FirebaseService", dependencies: ["CoreTracker", "Delivery", "GA4Wire", "ServiceSupport", "WireJSON"],
      path: "Packages/Services/FirebaseService"
    ),
    .testTarget(
      name: "FirebaseServiceTests",
      dependencies: ["FirebaseService", "CoreTracker", "Delivery", "GA4Wire", "ServiceSupport", "TestSupport"],
      path: "Tests/FirebaseServiceTests"
    ),
    .testTarget(
      name: "MixpanelServiceTests",
      dependencies: [
        "MixpanelService", "CoreTracker", "Delivery", "MixpanelWire", "ServiceSupport", "TestSupport", "WireJSON",
      ],
      path: "Tests/MixpanelServiceTests"
    ),
    .target(
      name: "MixpanelService", dependencies: ["CoreTracker", "Delivery", "MixpanelWire", "ServiceSupport", "WireJSON"],
      path: "Packages/Services/MixpanelService"
    ),
    .target(name: "CollectorWire", dependencies: ["WireJSON"], path: "Packages/Wire/CollectorWire"),
    .testTarget(
      name: "CollectorWireTests", dependencies: ["CollectorWire", "TestSupport", "WireJSON"],
      path: "Tests/CollectorWireTests"
    ),
    .target(name: "TrackingPlan", dependencies: ["CollectorWire", "WireJSON"], path: "Packages/Wire/TrackingPlan"),
    .testTarget(
      name: "TrackingPlanTests", dependencies: ["TrackingPlan", "CollectorWire", "WireJSON"],
      path: "Tests/TrackingPlanTests"
    ),
    .executableTarget(name: "TrackingPlanCodegen", dependencies: ["TrackingPlan"], path: "Tools/TrackingPlanCodegen"),
    .testTarget(
      name: "TrackingPlanCodegenTests", dependencies: ["TrackingPlanCodegen", "TrackingPlan"],
      path: "Tests/TrackingPlanCodegenTests"
    ),
    .plugin(
      name: "TrackingPlanPlugin", capability: .buildTool(), dependencies: ["TrackingPlanCodegen"],
      path: "Tools/TrackingPlanPlugin"
    ),
    .target(name: "GA4Wire", dependencies: ["WireJSON"], path: "Packages/Wire/GA4Wire"),
    .testTarget(name: "GA4WireTests", dependencies: ["GA4Wire", "TestSupport"], path: "Tests/GA4WireTests"),
    .target(name: "MixpanelWire", dependencies: ["WireJSON"], path: "Packages/Wire/MixpanelWire"),
    .testTarget(
      name: "MixpanelWireTests", dependencies: ["MixpanelWire", "TestSupport"], path: "Tests/MixpanelWireTests"
    ),

    // MARK: Test support
    .target(
      name: "TestSupport",
      dependencies: [
        .compressNIO,
        .httpTypes,
        .hummingbird,
        .logging,
        .nioCore,
        .serviceLifecycle,
      ],
      path: "Tests/Support/TestSupport"
    ),

    .executableTarget(
      name: "CrashHelper",
      dependencies: ["CollectorService", "CoreTracker", "Delivery"],
      path: "Tests/Support/CrashHelper"
    ),

    // MARK: Shared services
    .target(
      name: "LogService",
      dependencies: ["CoreTracker", "ServiceSupport", .logging],
      path: "Packages/Services/LogService"
    ),
    .testTarget(
      name: "LogServiceTests",
      dependencies: ["LogService", "CoreTracker", .logging],
      path: "Tests/LogServiceTests"
    ),

    .target(
      name: "CollectorService",
      dependencies: ["CollectorWire", "CoreTracker", "Delivery", "ServiceSupport"],
      path: "Packages/Services/CollectorService"
    ),
    .testTarget(
      name: "CollectorServiceTests",
      dependencies: [
        "CollectorService", "CollectorWire", "CoreTracker", "CoreTrackerTesting", "CrashHelper", "Delivery",
        "DLTracker", "TestSupport", "TYTracker",
      ],
      path: "Tests/CollectorServiceTests"
    ),

    .target(
      name: "SimpleAnalyticsService",
      dependencies: ["CollectorWire", "CoreTracker", "Delivery", "ServiceSupport"],
      path: "Packages/Services/SimpleAnalyticsService"
    ),
    .testTarget(
      name: "SimpleAnalyticsServiceTests",
      dependencies: ["SimpleAnalyticsService", "CollectorWire", "CoreTracker", "Delivery", "TestSupport"],
      path: "Tests/SimpleAnalyticsServiceTests"
    ),

    // MARK: Collector (server side)
    .target(
      name: "CollectorStore", dependencies: ["CollectorWire", "WireJSON"], path: "Packages/Collector/CollectorStore"),
    .target(
      name: "CollectorSQLite",
      dependencies: [
        "CollectorReports", "CollectorStore", "CollectorWire", .logging,
        .grdb,
        .grdbSQLite,
      ],
      path: "Packages/Collector/CollectorSQLite"
    ),
    .target(
      name: "CollectorPostgres",
      dependencies: [
        "CollectorReports", "CollectorStore", "CollectorWire", .logging,
        .nioCore,
        .postgresNIO,
        .serviceLifecycle,
      ],
      path: "Packages/Collector/CollectorPostgres"
    ),
    .target(
      name: "CollectorClickHouse",
      dependencies: [
        "CollectorReports", "CollectorStore", "CollectorWire", "WireJSON",
        .logging,
        .asyncHTTPClient,
        .nioCore,
        .nioFoundationCompat,
        .nioHTTP1,
      ],
      path: "Packages/Collector/CollectorClickHouse"
    ),
    .target(
      name: "CollectorReports",
      dependencies: [
        "CollectorStore", "CollectorWire", "TrackingPlan", "WireJSON", .logging,
      ],
      path: "Packages/Collector/CollectorReports"
    ),
    .target(
      name: "CollectorDashboard",
      dependencies: ["CollectorReports", "CollectorStore", "CollectorWire", "TrackingPlan"],
      path: "Packages/Collector/CollectorDashboard"
    ),
    .testTarget(
      name: "CollectorReportsTests",
      dependencies: [
        "CollectorClickHouse", "CollectorReports", "CollectorPostgres", "CollectorSQLite", "CollectorStore",
        "CollectorWire", "TestSupport", "WireJSON",
        .asyncHTTPClient,
      ],
      path: "Tests/CollectorReportsTests"
    ),
    .target(
      name: "CollectorVendors",
      dependencies: ["CollectorIngest", "CollectorStore", "CollectorWire", "GA4Wire", "MixpanelWire", "WireJSON"],
      path: "Packages/Collector/CollectorVendors"
    ),
    .target(
      name: "CollectorIngest",
      dependencies: [
        "CollectorStore", "CollectorWire", "TrackingPlan", "WireJSON",
        .crypto,
      ],
      path: "Packages/Collector/CollectorIngest"
    ),
    .target(
      name: "CollectorRuntime",
      dependencies: [
        "CollectorStore", .crypto,
        .logging,
        .prometheus,
        .serviceLifecycle,
      ],
      path: "Packages/Collector/CollectorRuntime"
    ),
    .target(
      name: "CollectorServer",
      dependencies: [
        "CollectorRuntime", "CollectorClickHouse",
        "CollectorDashboard", "CollectorIngest", "CollectorPostgres", "CollectorReports", "CollectorSQLite",
        "CollectorStore", "CollectorVendors", "CollectorWire", "GA4Wire", "MixpanelWire", "TrackingPlan", "WireJSON",
        .compressNIO,
        .httpTypes,
        .hummingbird,
        .hummingbirdCore,
        .logging,
        .nioCore,
        .nioHTTPTypes,
        .serviceLifecycle,
        .yams,
      ],
      path: "Packages/Collector/CollectorServer"
    ),
    .executableTarget(
      name: "Collector",
      dependencies: [
        "CollectorServer", .argumentParser,
        .logging,
      ],
      path: "Apps/Collector/Sources/Collector"
    ),
    .testTarget(
      name: "CollectorStoreTests",
      dependencies: [
        "CollectorClickHouse", "CollectorPostgres", "CollectorSQLite", "CollectorStore", "CollectorWire", "TestSupport",
        .asyncHTTPClient,
        .nioCore,
        .postgresNIO,
      ],
      path: "Tests/CollectorStoreTests"
    ),
    .testTarget(
      name: "CollectorIngestTests",
      dependencies: [
        "CollectorRuntime", "CollectorIngest", "CollectorSQLite", "CollectorStore", "CollectorWire", "TestSupport",
      ],
      path: "Tests/CollectorIngestTests"
    ),
    .testTarget(
      name: "CollectorServerTests",
      dependencies: [
        "CollectorRuntime",
        "Collector", "CollectorClickHouse", "CollectorDashboard", "CollectorIngest", "CollectorPostgres",
        "CollectorReports",
        "CollectorServer", "CollectorService",
        "CollectorSQLite",
        "CollectorStore", "CollectorWire", "CoreTracker", "Delivery", "DLProductDetail", "DLTracker", "FirebaseService",
        "GA4Wire", "LogService", "MixpanelService", "MixpanelWire", "SimpleAnalyticsService", "ServiceSupport",
        "TestSupport",
        "TYProductDetail", "TYTracker",
        .hummingbird,
        .hummingbirdCore,
        .hummingbirdTesting,
        .nioCore,
      ],
      path: "Tests/CollectorServerTests"
    ),

    // MARK: Tools
    .target(
      name: "TrackerCtlKit",
      dependencies: [
        "CollectorRuntime", "CollectorClickHouse",
        "CollectorIngest", "CollectorPostgres", "CollectorReports", "CollectorSQLite", "CollectorStore",
        "CollectorWire", "TrackingPlan",
        .logging,
      ],
      path: "Tools/trackerctl/Sources/TrackerCtlKit"
    ),
    .executableTarget(
      name: "trackerctl",
      dependencies: [
        "CollectorReports", "CollectorSQLite", "CollectorServer", "CollectorStore", "CollectorWire", "TrackerCtlKit",
        "TrackingPlan",
        .argumentParser,
      ],
      path: "Tools/trackerctl/Sources/trackerctl"
    ),
    .testTarget(
      name: "TrackerCtlKitTests",
      dependencies: [
        "CollectorRuntime",
        "CollectorIngest", "CollectorReports", "CollectorServer", "CollectorSQLite", "CollectorStore", "CollectorWire",
        "TestSupport",
        "TrackerCtlKit", "TrackingPlan", .hummingbird,
        .hummingbirdTesting,
        .logging,
      ],
      path: "Tests/TrackerCtlKitTests"
    ),

    // MARK: Apps
    .target(
      name: "ShopDemoKit",
      dependencies: [
        "CollectorRuntime",
        "CollectorIngest", "CollectorReports", "CollectorServer", "CollectorService", "CollectorSQLite",
        "CollectorStore",
        "CoreTracker",
        "Delivery", "DLProductDetail",
        "DLSellerProfile", "DLTracker", "FirebaseService", "LogService", "MixpanelService", "TYCheckout",
        "TYProductDetail", "TYTracker", .hummingbird,
        .logging,
        .serviceLifecycle,
        .unixSignals,
      ],
      path: "Apps/ShopDemo/Sources/ShopDemoKit"
    ),
    .testTarget(
      name: "ShopDemoKitTests",
      dependencies: [
        "ShopDemoKit", "CollectorReports", "CollectorServer", "CollectorService", "CollectorStore", "CoreTracker",
        "TestSupport",
      ],
      path: "Tests/ShopDemoKitTests"
    ),
    .executableTarget(
      name: "ShopDemo",
      dependencies: [
        "CollectorReports", "ShopDemoKit",
        .argumentParser,
        .logging,
      ],
      path: "Apps/ShopDemo/Sources/ShopDemo"),
  ]
)

// MARK: Products
// Each product of the super app: its tracker (the events of Plans/<tracker>.json, generated on every
// build by the plugin), the tracker's tests (against the services a product sends to), and its
// features, each a library over the tracker alone, with its tests.
package.targets += product(
  "Trendyol", tracker: "TYTracker", features: ["TYProductDetail", "TYCheckout"],
  trackerTests: ["CollectorService", "FirebaseService", "LogService", "MixpanelService", "ServiceSupport"])
package.targets += product(
  "DolapLite", tracker: "DLTracker", features: ["DLProductDetail", "DLSellerProfile"],
  trackerTests: ["CollectorService", "FirebaseService", "LogService", "MixpanelService"])

/// The targets of the product in `Packages/Products/<folder>`: `tracker`, its features, and the tests
/// of each (`trackerTests`: what the tracker's tests need beyond the tracker and the test doubles).
func product(_ folder: String, tracker: String, features: [String], trackerTests: [Target.Dependency]) -> [Target] {
  let testing: [Target.Dependency] = ["CoreTrackerTesting"]
  let trackerTargets: [Target] = [
    .target(
      name: tracker, dependencies: ["CoreTracker", "LogService", "ServiceSupport", "TrackingPlan"],
      path: "Packages/Products/\(folder)/\(tracker)", plugins: ["TrackingPlanPlugin"]),
    .testTarget(
      name: tracker + "Tests", dependencies: [.byName(name: tracker)] + testing + trackerTests + ["TestSupport"],
      path: "Tests/\(tracker)Tests"),
  ]
  return trackerTargets
    + features.flatMap { feature -> [Target] in
      [
        .target(name: feature, dependencies: [.byName(name: tracker)], path: "Packages/Products/\(folder)/\(feature)"),
        .testTarget(
          name: feature + "Tests", dependencies: [.byName(name: feature), .byName(name: tracker)] + testing,
          path: "Tests/\(feature)Tests"),
      ]
    }
}

// Shared settings, applied once (CONVENTIONS.md): strict, explicit, Swift 6 everywhere.
for target in package.targets where target.type != .plugin {
  var settings = target.swiftSettings ?? []
  settings += [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
  ]
  target.swiftSettings = settings
}

/// The other packages' products the targets use, each named once. All but swift-log's come only with
/// the `Server` trait: an app that turns it off builds the client products with swift-log alone.
extension Target.Dependency {
  static var argumentParser: Self { server("ArgumentParser", package: "swift-argument-parser") }
  static var asyncHTTPClient: Self { server("AsyncHTTPClient", package: "async-http-client") }
  static var compressNIO: Self { server("CompressNIO", package: "compress-nio") }
  static var crypto: Self { server("Crypto", package: "swift-crypto") }
  static var grdb: Self { server("GRDB", package: "GRDB.swift") }
  static var grdbSQLite: Self { server("GRDBSQLite", package: "GRDB.swift") }
  static var httpTypes: Self { server("HTTPTypes", package: "swift-http-types") }
  static var hummingbird: Self { server("Hummingbird", package: "hummingbird") }
  static var hummingbirdCore: Self { server("HummingbirdCore", package: "hummingbird") }
  static var hummingbirdTesting: Self { server("HummingbirdTesting", package: "hummingbird") }
  static var logging: Self { .product(name: "Logging", package: "swift-log") }
  static var nioCore: Self { server("NIOCore", package: "swift-nio") }
  static var nioFoundationCompat: Self { server("NIOFoundationCompat", package: "swift-nio") }
  static var nioHTTP1: Self { server("NIOHTTP1", package: "swift-nio") }
  static var nioHTTPTypes: Self { server("NIOHTTPTypes", package: "swift-nio-extras") }
  static var postgresNIO: Self { server("PostgresNIO", package: "postgres-nio") }
  static var prometheus: Self { server("Prometheus", package: "swift-prometheus") }
  static var serviceLifecycle: Self { server("ServiceLifecycle", package: "swift-service-lifecycle") }
  static var unixSignals: Self { server("UnixSignals", package: "swift-service-lifecycle") }
  static var yams: Self { server("Yams", package: "Yams") }

  /// A product of one of the collector's packages, built only with the `Server` trait.
  private static func server(_ name: String, package: String) -> Self {
    .product(name: name, package: package, condition: .when(traits: ["Server"]))
  }
}
