// crash-helper: tracks numbered events through a Tracker and CollectorService until it is killed.
//
//   crash-helper <outbox dir> <collector URL> <first index> <progress file> [<tag>]
//       track until killed (events carry `p`: the tag, when given: several processes share the dirs)
//   crash-helper <outbox dir> <collector URL> --flush                         deliver what waits
//   crash-helper <outbox dir> <collector URL> --lifecycle <version>           one app run: start,
//       "work", background, terminate, deliver (lifecycle state in `<outbox dir>-state`)
//
// With CRASH_HELPER_LIMIT=<n> in the environment it stops tracking at index n (then idles until
// killed) and paces itself at 20,000 events/s; with CRASH_HELPER_SMALL_OUTBOX=1 the outbox holds
// about 2,800 events (1 MiB) and batches hold 250, so a slow collector fills it and the journal
// must hold the rest (backpressure); CRASH_HELPER_JOURNAL_BYTES=<n> bounds the journal (the disk
// budget) so that a long outage drops its oldest events (counted, and reported to the collector).
//
// After each `track` returns it stores the next index into a memory-mapped progress file, which the
// kernel keeps when the process is killed: the test reads exactly which events `track` returned for.
// Before each `track` it stores the index it tracks into the file's second word: when the two are
// equal, the process died inside `track` (the event may or may not be journaled).
// The tracker journals into `<outbox dir>-journal`, so what a killed run had not handed to the
// service yet is replayed by the next run.
import CollectorService
import CoreTracker
import Delivery
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
  FileHandle.standardError.write(Data("usage: crash-helper <dir> <url> (<first> <progress> | --flush)\n".utf8))
  exit(2)
}
// Bounds far above what the test tracks: the only losses left are the crash window itself (a busy
// machine, a whole test suite in parallel, must not turn into `queue_full` or `outbox_full` drops,
// which are counted losses by design but not what this test is about).
let environment = ProcessInfo.processInfo.environment
let smallOutbox = environment["CRASH_HELPER_SMALL_OUTBOX"] == "1"
let limit = environment["CRASH_HELPER_LIMIT"].flatMap { Int($0) }
let collector = try CollectorService(
  endpoint: URL(string: arguments[2])!, writeKey: "crash-test", directory: URL(fileURLWithPath: arguments[1]),
  outbox: smallOutbox
    ? OutboxConfiguration(maximumBytes: 1 << 20, segmentBytes: 256 << 10)
    : OutboxConfiguration(maximumBytes: 256 << 20, maximumRecords: 2_000_000),
  batchSize: smallOutbox ? 250 : .max,
  retry: RetryPolicy(initialDelay: 0.01, maximumDelay: 0.1),
  policy: FlushPolicy(count: 100, interval: 0.2, flushTimeout: 60)
)
if arguments[3] == "--lifecycle", arguments.count >= 5 {
  let lifecycle = ManualLifecycleSource()
  let tracker = Tracker(
    services: [collector],
    configuration: TrackerConfiguration(
      context: TrackingContext(appName: "Shop", appVersion: arguments[4], appBuild: "1", platform: "iOS"),
      lifecycle: AppLifecycle(source: lifecycle, directory: URL(fileURLWithPath: arguments[1] + "-state"))))
  tracker.track(GenericEvent("work"))
  lifecycle.send(.enteredBackground)
  lifecycle.send(.willTerminate)
  // A slow answer (a loaded machine, ThreadSanitizer) leaves a batch for the next attempt: flush
  // until everything is delivered, as `--flush` does, for at most 50 s.
  let deadline = Date().addingTimeInterval(50)
  repeat {
    await tracker.flush()
  } while (collector.statistics()?.queued ?? 0) > 0 && Date() < deadline
  exit(collector.statistics()?.queued == 0 ? 0 : 1)
}

let journalBytes = environment["CRASH_HELPER_JOURNAL_BYTES"].flatMap { Int($0) } ?? 64 << 20
let journal = TrackerJournal(directory: URL(fileURLWithPath: arguments[1] + "-journal"), maximumBytes: journalBytes)
let anonymousID = try AnonymousID.loadOrCreate(in: URL(fileURLWithPath: arguments[1] + "-state"))
let tracker = Tracker(
  services: [collector],
  configuration: TrackerConfiguration(anonymousID: anonymousID, queueCapacity: 2_000_000, journal: journal))
if let error = tracker.stats.journalError {
  FileHandle.standardError.write(Data("journal: \(error)\n".utf8))
  exit(4)
}

if arguments[3] == "--flush" {
  // A flush delivers what the outbox holds; with backpressure the journal may hold more: go on
  // until both are empty (bounded).
  let deadline = Date().addingTimeInterval(150)
  repeat {
    await tracker.flush()
  } while (tracker.stats.queued > 0 || (collector.statistics()?.queued ?? 0) > 0) && Date() < deadline
  let stats = collector.statistics()
  let dropped = stats?.dropped.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ",") ?? ""
  print(
    "queued=\(stats?.queued ?? -1) delivered=\(stats?.delivered ?? -1) tracker-queued=\(tracker.stats.queued) "
      + "dropped=[\(dropped)] tracker-dropped=\(tracker.stats.totalDropped)")
  exit(stats?.queued == 0 && tracker.stats.queued == 0 ? 0 : 1)
}

let first = Int(arguments[3])!
let descriptor = open(arguments[4], O_RDWR | O_CREAT, 0o600)
guard descriptor >= 0, ftruncate(descriptor, 16) == 0,
  let progress = mmap(nil, 16, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), progress != MAP_FAILED
else { exit(3) }
var index = first
progress.storeBytes(of: Int64(-1), toByteOffset: 8, as: Int64.self)
let tag: ParameterValue? = arguments.count > 5 ? .string(arguments[5]) : nil
while true {
  if let limit, index >= limit {
    sleep(1)
    continue
  }
  var parameters: EventParameters = ["i": .int(index)]
  parameters["p"] = tag
  progress.storeBytes(of: Int64(index), toByteOffset: 8, as: Int64.self)
  tracker.track(GenericEvent("crash_probe", parameters: parameters))
  index += 1
  progress.storeBytes(of: Int64(index), as: Int64.self)
  if limit != nil {
    if index % 20 == 0 { usleep(1000) }
  } else if index % 5 == 0 {
    usleep(1000)
  }
}
