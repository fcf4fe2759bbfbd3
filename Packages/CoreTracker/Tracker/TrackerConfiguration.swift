public import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// How a ``Tracker`` enriches, filters and queues events. Every setting has a production default.
public struct TrackerConfiguration: Sendable {
  /// App, OS and device facts stamped on every event. Defaults to the running process's.
  public var context: TrackingContext
  /// The install's anonymous identifier. Persist it across launches with ``AnonymousID/loadOrCreate(in:)``;
  /// the default is a fresh random one per tracker.
  public var anonymousID: String
  /// Default parameters (super properties) added to every event that lacks the key.
  public var defaultParameters: EventParameters
  /// The user id to start with, if the user is already known.
  public var userID: String?
  /// A gap without events longer than this ends the session. Default: 30 minutes.
  public var sessionTimeout: TimeInterval
  /// Whether the tracker emits `session_start` and `session_end` events.
  public var emitsSessionEvents: Bool
  /// How many tracked events may wait for the worker; past that, `track` drops with
  /// ``DropReason/queueFull`` (counted, never silent). Default 100,000: a burst of 50,000 events
  /// tracked in one loop (faster than the worker encodes them) is taken whole. The queue holds the
  /// events as the app made them and grows only while a burst lasts.
  public var queueCapacity: Int
  /// The consent to start with.
  public var consent: Consent
  /// Sampling by event name.
  public var sampling: SamplingStage
  /// Name validation.
  public var validation: ValidationStage
  /// The app's own stages, run after validation and before privacy scrubbing.
  public var additionalStages: [any PipelineStage]
  /// Privacy scrubbing, the last stage before routing.
  public var privacy: PrivacyStage
  /// The clock that stamps events; tests and simulations inject their own.
  public var clock: @Sendable () -> Date
  /// A fixed seed for event ids (reproducible tests and simulations); `nil` seeds from the system.
  public var idSeed: UInt64?
  /// Where `track` journals events so that none is lost if the process dies; `nil` (the default)
  /// keeps them in memory until the worker hands them to the services. See ``TrackerJournal``.
  public var journal: TrackerJournal?
  /// App lifecycle tracking: installed / updated / opened / backgrounded events, sending on
  /// background, the session's end on terminate. `nil` (the default): none. See ``AppLifecycle``.
  public var lifecycle: AppLifecycle?
  /// Where the tracker says what an app must not miss: a service refused with 401 or 403 (a wrong
  /// or revoked write key), once per service. Default: a line on standard error.
  public var warning: @Sendable (String) -> Void
  /// Debug mode: a line for every event tracked, handed to a service or dropped, and for every
  /// delivery outcome with the server's reasons (``DebugLog``). `nil` (the default): off.
  public var debug: DebugLog?

  /// The build's environment, stamped on every event (the context's
  /// ``TrackingContext/environment``).
  public var environment: TrackingEnvironment {
    get { TrackingEnvironment(context.environment) }
    set { context.environment = newValue.name }
  }

  /// Creates a configuration; every parameter has a production default. `environment`, when
  /// given, replaces the context's (``TrackingEnvironment/detect(debug:receiptURL:override:)``
  /// picks it from the build).
  public init(
    context: TrackingContext = .current(),
    environment: TrackingEnvironment? = nil,
    anonymousID: String = AnonymousID.random(),
    defaultParameters: EventParameters = EventParameters(),
    userID: String? = nil,
    sessionTimeout: TimeInterval = 30 * 60,
    emitsSessionEvents: Bool = true,
    queueCapacity: Int = 100_000,
    consent: Consent = .granted,
    sampling: SamplingStage = SamplingStage(),
    validation: ValidationStage = ValidationStage(),
    additionalStages: [any PipelineStage] = [],
    privacy: PrivacyStage = PrivacyStage(),
    clock: @escaping @Sendable () -> Date = { Date() },
    idSeed: UInt64? = nil,
    journal: TrackerJournal? = nil,
    lifecycle: AppLifecycle? = nil,
    warning: @escaping @Sendable (String) -> Void = TrackerConfiguration.standardError,
    debug: DebugLog? = nil
  ) {
    self.context = context
    if let environment { self.context.environment = environment.name }
    self.anonymousID = anonymousID
    self.defaultParameters = defaultParameters
    self.userID = userID
    self.sessionTimeout = sessionTimeout
    self.emitsSessionEvents = emitsSessionEvents
    self.queueCapacity = max(1, queueCapacity)
    self.consent = consent
    self.sampling = sampling
    self.validation = validation
    self.additionalStages = additionalStages
    self.privacy = privacy
    self.clock = clock
    self.idSeed = idSeed
    self.journal = journal
    self.lifecycle = lifecycle
    self.warning = warning
    self.debug = debug
  }

  /// Writes a line to standard error: the default ``warning``.
  @Sendable public static func standardError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
  }

  /// The stages in the order the tracker runs them after enrichment and consent.
  var stages: [any PipelineStage] { [sampling, validation] + additionalStages + [privacy] }
}

/// The install's anonymous identifier: random, carries nothing personal.
public enum AnonymousID {
  /// A new random identifier (a UUID string).
  public static func random() -> String { UUID().uuidString.lowercased() }

  /// The identifier stored in `directory` (file `anonymous-id`), created on first use.
  ///
  /// Several processes may share `directory` (an app and its extensions in an App Group
  /// container): the file is created whole under a temporary name and linked into place only if
  /// it does not exist yet, so processes starting at once all end up with the one identifier that
  /// won. Call it once at start-up (it reads a file), not on the tracking path.
  public static func loadOrCreate(in directory: URL) throws -> String {
    let file = directory.appendingPathComponent("anonymous-id")
    if let stored = stored(in: file) { return stored }
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let candidate = directory.appendingPathComponent(".anonymous-id-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: candidate) }
    try Data(random().utf8).write(to: candidate)
    // link(2) fails when the name exists: the first process to link wins, everyone reads its id.
    if link(candidate.path, file.path) != 0, errno != EEXIST {
      throw FileError.io("link \(file.lastPathComponent)", errno)
    }
    if let stored = stored(in: file) { return stored }
    // The file there is damaged (empty, too long, not text): this identifier replaces it.
    guard rename(candidate.path, file.path) == 0, let stored = stored(in: file) else {
      throw FileError.io("replace \(file.lastPathComponent)", errno)
    }
    return stored
  }

  /// Replaces the identifier stored in `directory` with a new random one and returns it: what an app
  /// passes to ``CoreTracker/reset(anonymousID:)`` when the user signs out.
  public static func replace(in directory: URL) throws -> String {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let id = random()
    try Data(id.utf8).write(to: directory.appendingPathComponent("anonymous-id"), options: .atomic)
    return id
  }

  private static func stored(in file: URL) -> String? {
    guard let data = try? Data(contentsOf: file), data.count <= 256,
      let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
      !text.isEmpty
    else { return nil }
    return text
  }
}
