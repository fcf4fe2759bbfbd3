// swift-tools-version: 6.1
// Benchmarks for the CoreTracker monorepo, run with `swift package benchmark` from this folder.
// A package of its own so the root build does not carry the benchmark harness; it depends on the
// root package by path.
import PackageDescription

/// A benchmark target: `Benchmarks/<name>`, the harness and its plugin, plus `products`.
func benchmark(_ name: String, _ products: [Target.Dependency]) -> Target {
  .executableTarget(
    name: name,
    dependencies: [.product(name: "Benchmark", package: "benchmark")] + products,
    path: "Benchmarks/\(name)",
    plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
  )
}

let package = Package(
  name: "CoreTrackerBenchmarks",
  platforms: [.macOS(.v13)],
  dependencies: [
    .package(name: "CoreTracker", path: "../.."),
    .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
  ],
  targets: [
    benchmark("DecodeBenchmarks", [.product(name: "CollectorWire", package: "CoreTracker")]),
    benchmark(
      "DeliveryBenchmarks",
      [
        .product(name: "CollectorService", package: "CoreTracker"),
        .product(name: "CoreTracker", package: "CoreTracker"),
        .product(name: "Delivery", package: "CoreTracker"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    benchmark(
      "EncodeBenchmarks",
      [
        .product(name: "CollectorService", package: "CoreTracker"),
        .product(name: "CoreTracker", package: "CoreTracker"),
        .product(name: "FirebaseService", package: "CoreTracker"),
        .product(name: "MixpanelService", package: "CoreTracker"),
        .product(name: "ServiceSupport", package: "CoreTracker"),
      ]
    ),
    benchmark("TrackBenchmarks", [.product(name: "CoreTracker", package: "CoreTracker")]),
    // Report latency on generated data: a plain executable (its data takes minutes to generate, so
    // it runs each report 5 times and prints a table instead of using the harness).
    .executableTarget(
      name: "ReportBenchmark",
      dependencies: [
        .product(name: "CollectorClickHouse", package: "CoreTracker"),
        .product(name: "CollectorPostgres", package: "CoreTracker"),
        .product(name: "CollectorReports", package: "CoreTracker"),
        .product(name: "CollectorSQLite", package: "CoreTracker"),
        .product(name: "CollectorStore", package: "CoreTracker"),
      ],
      path: "Benchmarks/ReportBenchmark"
    ),
  ]
)
