import ServiceSupport
import Testing

private struct Broken: Error, Equatable {
  var rule: String
}

@Suite("LimitLedger")
struct LimitLedgerTests {
  enum Policy: String, CaseIterable {
    case repair, drop, strict
    var limitPolicy: LimitPolicy {
      switch self {
      case .repair: .repair
      case .drop: .drop
      case .strict: .strict { _ in }
      }
    }
  }

  @Test(arguments: Policy.allCases)
  func aFixIsCountedOnlyWhenRepairing(policy: Policy) {
    var ledger = LimitLedger<Broken>(policy: policy.limitPolicy)
    let fixed = ledger.fix(Broken(rule: "long"), "cut", as: "value_truncated")
    if policy == .repair {
      #expect(fixed == "cut" && ledger.repaired == ["value_truncated"] && ledger.violations.isEmpty)
    } else {
      #expect(fixed == nil && ledger.repaired.isEmpty && ledger.violations == [Broken(rule: "long")])
    }
  }

  @Test(arguments: Policy.allCases)
  func noFixLeavesOutWhenAllowedAndIsAViolationOtherwise(policy: Policy) {
    var ledger = LimitLedger<Broken>(policy: policy.limitPolicy)
    #expect(ledger.fix(Broken(rule: "name"), nil as String?, as: "name_fixed", leftOut: "left_out") == nil)
    #expect(ledger.fix(Broken(rule: "other"), nil as String?, as: "other_fixed") == nil)
    ledger.leaveOut(Broken(rule: "duplicate"), as: "left_out")
    if policy == .repair {
      #expect(ledger.repaired == ["left_out", "left_out"])
      #expect(ledger.violations == [Broken(rule: "other")])
    } else {
      #expect(ledger.repaired.isEmpty)
      #expect(ledger.violations.map(\.rule) == ["name", "other", "duplicate"])
    }
  }

  @Test func mergeKeepsOrder() {
    var request = LimitLedger<Broken>(policy: .drop)
    _ = request.fix(Broken(rule: "user_id"), "x", as: "user_id_truncated")
    var event = LimitLedger<Broken>(policy: .drop)
    event.merge(request)
    _ = event.fix(Broken(rule: "name"), "y", as: "name_fixed")
    #expect(event.violations.map(\.rule) == ["user_id", "name"])
  }
}
