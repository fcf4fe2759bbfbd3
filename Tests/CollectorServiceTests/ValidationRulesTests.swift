import CollectorWire
import CoreTracker
import Testing

/// The tracker's pipeline validation and the collector's wire rules are one set of numbers:
/// `CollectorLimits` declares them and `ValidationStage`'s defaults must equal them (`CoreTracker`
/// depends on nothing, so it cannot name them; this suite is what fails when they drift).
@Suite("Validation rules: the pipeline's are the wire's")
struct ValidationRulesTests {
  @Test func thePipelinesDefaultsAreTheWiresLimits() {
    let stage = ValidationStage()
    #expect(stage.maximumNameBytes == CollectorLimits.maximumNameBytes)
    #expect(stage.maximumDepth == CollectorLimits.maximumValueDepth)
    #expect(stage.maximumElements == CollectorLimits.maximumValueElements)
  }

  /// A name the pipeline keeps is a name the collector accepts (the pipeline is stricter only about
  /// white space at the ends and C1 controls), measured alike in bytes at every boundary.
  @Test(arguments: [
    "add_to_cart", String(repeating: "x", count: 256), String(repeating: "x", count: 257),
    String(repeating: "ç", count: 128), String(repeating: "ç", count: 129), String(repeating: "🛒", count: 64),
    String(repeating: "🛒", count: 65), "", "a\u{7f}b", "tab\tinside",
  ])
  func aNameThePipelineKeepsIsOneTheCollectorAccepts(name: String) {
    let stage = ValidationStage()
    if stage.isValid(name) { #expect(EventRules.isName(name)) }
    #expect(stage.isValid(name) == (EventRules.isName(name) && name.trimmingWhiteSpaceIsNoop))
  }
}

extension String {
  fileprivate var trimmingWhiteSpaceIsNoop: Bool {
    guard let first = unicodeScalars.first, let last = unicodeScalars.last else { return true }
    return !first.properties.isWhitespace && !last.properties.isWhitespace
  }
}
