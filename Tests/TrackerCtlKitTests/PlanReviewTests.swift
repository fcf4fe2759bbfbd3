import CollectorReports
import Testing
import TrackerCtlKit
import TrackingPlan

@Suite("trackerctl plan")
struct PlanReviewTests {
  static let old = TrackingPlan(
    app: "ty", version: 1,
    events: [
      "viewed": .init(kind: "screen", parameters: [.init("id", type: .string, required: true)]),
      "shared": .init(parameters: [.init("channel", type: .string)]),
    ])

  @Test("the diff names each event and parameter added, removed or changed")
  func diff() {
    var new = Self.old
    new.version = 2
    new.events["shared"] = nil
    new.events["liked"] = .init(parameters: [.init("id", type: .string)])
    new.events["viewed"]?.parameters = [
      .init("id", type: .integer, required: true, minimum: 1), .init("tab", type: .string),
    ]
    #expect(
      PlanReview.diff(Self.old, new) == [
        "ty v1 → ty v2", "+ liked (id)", "- shared", "~ viewed: + tab (string, optional)",
        "~ viewed: id string, required → integer, required, ≥ 1",
      ])
    #expect(PlanReview.diff(Self.old, Self.old) == ["ty v1 → ty v1", "no change"])
  }

  @Test("health: events seen but not planned, planned but never seen, and violations by reason")
  func health() {
    let seen = CountList(
      dimension: "event",
      rows: [
        CountRow(name: "viewed", count: 40, devices: 9, share: 0.8),
        CountRow(name: "app_opened", count: 12, devices: 9, share: 0.2),
      ])
    #expect(
      PlanHealth.health(Self.old, seen: seen).rows == [
        ["app_opened", "not in the plan", "12"], ["shared", "never seen", "0"], ["viewed", "planned", "40"],
      ])
    let reasons = [
      "events[0].parameters.id: must be a string, not a number (tracking plan ty v1)",
      "events[3].parameters.id: must be a string, not a number (tracking plan ty v1)",
      "events[1].name: liked is not in the tracking plan (ty v1)", "events[2].timestamp: is older than 30 days",
    ]
    #expect(
      PlanHealth.violations(reasons).rows == [
        ["parameters.id: must be a string, not a number (tracking plan ty v1)", "2"],
        ["name: liked is not in the tracking plan (ty v1)", "1"],
      ])
  }
}
