public import CoreTracker
public import Logging
/// Service identifiers and limit policies come with every service.
@_exported public import ServiceSupport

#if canImport(os)
  import os
#endif

/// Writes each event as one line to the system log: the Moments design's system-log provider.
///
/// On Apple platforms the default goes through `os.Logger` (visible in Console.app, category
/// `events`); elsewhere, or when you pass a swift-log `Logger`, through swift-log.
///
/// One line per event, `key=value` pairs after the name, strings quoted and escaped:
///
/// ```text
/// event add_to_cart kind=action id=0193a4f2-... at=2026-11-21T10:15:30.123Z session=1763720130 user=- product_id="42" quantity=2
/// ```
///
/// ```swift
/// let tracker = Tracker(services: [LogService(label: "com.trendyol.tracking")])
/// ```
public struct LogService: TrackerService {
  public let id: ServiceID
  private let backend: Backend
  private let level: Logger.Level
  private let written = Locked(0)

  private enum Backend: Sendable {
    case swiftLog(Logger)
    #if canImport(os)
      case unified(os.Logger)
    #endif
  }

  /// Creates a log service writing under `label` (the subsystem on Apple platforms).
  public init(id: ServiceID = .log, label: String = "CoreTracker", level: Logger.Level = .info) {
    self.id = id
    self.level = level
    #if canImport(os)
      if #available(macOS 11, iOS 14, tvOS 14, watchOS 7, *) {
        backend = .unified(os.Logger(subsystem: label, category: "events"))
      } else {
        backend = .swiftLog(Logger(label: label))
      }
    #else
      backend = .swiftLog(Logger(label: label))
    #endif
  }

  /// Creates a log service writing through a swift-log `Logger` on every platform.
  public init(id: ServiceID = .log, logger: Logger, level: Logger.Level = .info) {
    self.id = id
    self.level = level
    backend = .swiftLog(logger)
  }

  public func receive(_ event: TrackedEvent) {
    write(Self.line(for: event))
  }

  private func write(_ line: String) {
    switch backend {
    case .swiftLog(let logger):
      logger.log(level: level, "\(line)")
    #if canImport(os)
      case .unified(let logger):
        logger.log(level: level.osLogType, "\(line, privacy: .public)")
    #endif
    }
    written.withLock { $0 += 1 }
  }

  /// Writes one line per increment: `counter Foregrounded\ app +1 at=...`; the log keeps no totals.
  public func receive(_ counter: CounterIncrement) {
    write("counter \(Self.quoted(counter.name)) +\(counter.amount) at=\(ISO8601.string(from: counter.timestamp))")
  }

  /// Counts the lines written as delivered: the log has no other outcome.
  public func statistics() -> ServiceStats? {
    ServiceStats(delivered: written.snapshot)
  }

  /// The line written for `event`.
  public static func line(for event: TrackedEvent) -> String {
    var line = "event \(event.name) kind=\(event.kind.rawValue) id=\(event.id)"
    line += " at=\(ISO8601.string(from: event.timestamp))"
    line += " session=\(event.session.map { String($0.id) } ?? "-")"
    line += " user=\(event.userID.map(quoted) ?? "-")"
    for parameter in event.parameters {
      line += " \(parameter.key)=\(rendered(parameter.value))"
    }
    return line
  }

  private static func rendered(_ value: ParameterValue) -> String {
    switch value {
    case .string(let text): quoted(text)
    default: value.text
    }
  }

  /// The text in double quotes with `\`, `"` and control characters escaped, so a line stays one line.
  private static func quoted(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      default:
        if scalar.properties.generalCategory == .control {
          result += "\\u{\(String(scalar.value, radix: 16))}"
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }
}

#if canImport(os)
  extension Logger.Level {
    fileprivate var osLogType: OSLogType {
      switch self {
      case .trace, .debug: .debug
      case .info, .notice: .info
      case .warning, .error: .error
      case .critical: .fault
      }
    }
  }
#endif
