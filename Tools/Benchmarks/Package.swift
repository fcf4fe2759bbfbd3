// swift-tools-version: 6.1
// Benchmarks for the CoreTracker monorepo, run with `swift package benchmark` from this folder.
// A package of its own so the root build does not carry the benchmark harness; it depends on the
// root package by path.
import PackageDescription

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
    .executableTarget(
      name: "DecodeBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "CollectorWire", package: "CoreTracker"),
      ],
      path: "Benchmarks/DecodeBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    .executableTarget(
      name: "DeliveryBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "CollectorService", package: "CoreTracker"),
        .product(name: "CoreTracker", package: "CoreTracker"),
        .product(name: "Delivery", package: "CoreTracker"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Benchmarks/DeliveryBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    .executableTarget(
      name: "TrackBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "CoreTracker", package: "CoreTracker"),
      ],
      path: "Benchmarks/TrackBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
  ]
)
