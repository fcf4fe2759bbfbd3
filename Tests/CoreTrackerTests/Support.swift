import CoreTracker
import CoreTrackerTesting
import Foundation

/// A clock tests move by hand.
final class ManualClock: Sendable {
  private let now: Locked<Date>
  init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { now = Locked(start) }
  var date: Date { now.snapshot }
  func advance(by seconds: TimeInterval) { now.withLock { $0 += seconds } }
  var function: @Sendable () -> Date { { self.date } }
}

/// Events for the core tests.
enum ShopEvent: CoreTrackable, Equatable {
  case productViewed(id: String)
  case liked(momentID: String, userID: String)
  case checkout(total: Double, email: String)
  case internalOnly
  case named(String, EventParameters)

  var name: String {
    switch self {
    case .productViewed: "product_viewed"
    case .liked: "moment_liked"
    case .checkout: "checkout"
    case .internalOnly: "internal_only"
    case .named(let name, _): name
    }
  }

  var kind: EventKind {
    switch self {
    case .productViewed: .screenView
    case .liked, .checkout: .action
    default: .event
    }
  }

  var parameters: EventParameters {
    switch self {
    case .productViewed(let id): ["product_id": .string(id)]
    case .liked(let moment, _): ["moment_id": .string(moment)]
    case .checkout(let total, let email):
      {
        var parameters: EventParameters = ["total": .double(total)]
        parameters.append(personal: "email", .string(email))
        return parameters
      }()
    case .internalOnly: [:]
    case .named(_, let parameters): parameters
    }
  }

  var services: ServiceSelection {
    if case .internalOnly = self { return [.collector] }
    return .all
  }

  func payload(for service: ServiceID) -> ServicePayload? {
    switch (self, service) {
    case (.liked(let moment, let user), .firebase):
      ServicePayload(
        name: "select_content",
        parameters: ["item_id": .string("moment-id-\(moment)-user-id-\(user)"), "item_name": "moment-like"]
      )
    case (.liked(let moment, _), .mixpanel):
      ServicePayload(name: "Moment Liked", parameters: ["Moment": .string(moment)])
    default:
      nil
    }
  }
}

extension ServiceID {
  static let firebase = ServiceID("firebase")
  static let mixpanel = ServiceID("mixpanel")
  static let collector = ServiceID("collector")
}

/// A tracker over recording services, with a manual clock and no session events unless asked.
struct Harness {
  let clock = ManualClock()
  let firebase = RecordingService(id: .firebase)
  let mixpanel = RecordingService(id: .mixpanel)
  let collector = RecordingService(id: .collector)
  let tracker: Tracker

  init(sessionEvents: Bool = false, configure: (inout TrackerConfiguration) -> Void = { _ in }) {
    var configuration = TrackerConfiguration(
      context: TrackingContext(appName: "Test", appVersion: "1.0", platform: "iOS"),
      anonymousID: "anon-1",
      emitsSessionEvents: sessionEvents,
      clock: clock.function
    )
    configure(&configuration)
    tracker = Tracker(services: [firebase, mixpanel, collector], configuration: configuration)
  }

  func flush() async { await tracker.flush() }
}
