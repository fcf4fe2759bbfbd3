public import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// Where the tests keep their files: one folder per test process under the temporary directory
/// (`coretracker-tests-<pid>`), removed when the process exits. A run that crashed or was killed
/// leaves its folder, and the next run removes the folders of processes that are gone, so repeated
/// runs do not fill the disk (a full run writes about 190 stores, 230 MB).
/// `CORETRACKER_KEEP_TEST_FILES=1` keeps the folder at exit, to look at what a failing test wrote
/// (the next run without it removes it).
public enum TestFiles {
  private static let prefix = "coretracker-tests-"

  /// This process's folder, created on first use (the folders of ended runs removed then).
  public static let root: URL = {
    let temporary = FileManager.default.temporaryDirectory
    let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
    for name in names where name.hasPrefix(prefix) {
      guard let pid = Int32(name.dropFirst(prefix.count)), !isRunning(pid) else { continue }
      try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
    }
    let root = temporary.appendingPathComponent("\(prefix)\(getpid())")
    try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    if ProcessInfo.processInfo.environment["CORETRACKER_KEEP_TEST_FILES"] == nil {
      atexit { try? FileManager.default.removeItem(at: TestFiles.root) }
    }
    return root
  }()

  /// A new, unique path in ``root`` (not created): `<prefix>-<UUID><suffix>`.
  public static func unique(_ prefix: String, suffix: String = "") -> URL {
    root.appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)")
  }

  /// Whether process `pid` runs (or runs as another user).
  private static func isRunning(_ pid: Int32) -> Bool { kill(pid, 0) == 0 || errno == EPERM }
}

/// A fresh directory in ``TestFiles/root``, removed when the value goes away.
public struct TemporaryDirectory: ~Copyable {
  /// The directory's URL (not created: the code under test creates what it owns).
  public let url: URL

  /// A new, unique directory name.
  public init(prefix: String = "coretracker") { url = TestFiles.unique(prefix) }

  deinit { try? FileManager.default.removeItem(at: url) }
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns its last value.
public func waitUntil(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 20_000_000)
  }
  return condition()
}

/// Whether no live outbox holds a run in a service's `directory`: each `runs/<run>/owner.lock` can
/// be locked. A test that "restarts" a service in the same process waits for this before opening it
/// again: the first instance's sending task lets go of its run a moment after the instance's scope
/// ends, and until then the new run cannot adopt it (a restarted process has nothing left behind).
public func outboxRunsAreUnlocked(in directory: URL) -> Bool {
  let runs = directory.appendingPathComponent("runs")
  let names = (try? FileManager.default.contentsOfDirectory(atPath: runs.path)) ?? []
  return names.filter { !$0.hasPrefix(".") }.allSatisfy { name in
    let path = runs.appendingPathComponent(name).appendingPathComponent("owner.lock").path
    let descriptor = open(path, O_RDWR)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
    flock(descriptor, LOCK_UN)
    return true
  }
}

/// A counter test servers' handlers can share across requests.
public final class LockedCounter: @unchecked Sendable {
  // @unchecked: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value = 0

  public init() {}

  /// Adds one and returns the new value (1 for the first call).
  public func next() -> Int {
    lock.withLock {
      value += 1
      return value
    }
  }
}

/// A flag a test flips while a server handler reads it.
public final class LockedFlag: @unchecked Sendable {
  // @unchecked: `stored` is only touched under `lock`.
  private let lock = NSLock()
  private var stored: Bool

  public init(_ value: Bool) { stored = value }

  /// The current value.
  public var value: Bool {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}

/// The PostgreSQL server the tests use: `COLLECTOR_TEST_POSTGRES_URL` (`.ci/run` starts one on
/// 127.0.0.1 with `.ci/postgres` and sets it). `nil` when the variable is not set.
public enum PostgresTestServer {
  /// The server's URL, if configured.
  public static var url: String? {
    ProcessInfo.processInfo.environment["COLLECTOR_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// Whether the tests run in CI (where PostgreSQL must be configured).
  public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] != nil }

  /// A schema name no other test uses.
  public static func uniqueSchema(_ prefix: String = "t") -> String {
    "\(prefix)_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16))"
  }
}

/// The throw-away ClickHouse servers of the tests (`.ci/clickhouse`), when configured.
public enum ClickHouseTestServer {
  /// The single-node server's URL (`COLLECTOR_TEST_CLICKHOUSE_URL`), if configured.
  public static var url: String? {
    ProcessInfo.processInfo.environment["COLLECTOR_TEST_CLICKHOUSE_URL"].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// The two shards' URLs (`COLLECTOR_TEST_CLICKHOUSE_SHARD_URLS`), if configured.
  public static var shardURLs: [String]? {
    ProcessInfo.processInfo.environment["COLLECTOR_TEST_CLICKHOUSE_SHARD_URLS"].flatMap {
      $0.isEmpty ? nil : $0.split(separator: ",").map(String.init)
    }
  }

  /// The cluster the shards' configuration names (`.ci/clickhouse`).
  public static let cluster = "coretracker_shards"

  /// A database name no other test uses.
  public static func uniqueDatabase() -> String { PostgresTestServer.uniqueSchema("t") }
}

/// A seeded SplitMix64 generator: the same seed gives the same values on every run and machine, so a
/// generated or damaged input that fails a test is reproduced by its seed.
public struct SeededRandom: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator starting from `seed`.
  public init(seed: UInt64) { state = seed }

  public mutating func next() -> UInt64 {
    state &+= 0x9e37_79b9_7f4a_7c15
    var z = state
    z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
    z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
    return z ^ (z >> 31)
  }
}
