import CoreTracker
import MixpanelWire
import ServiceSupport
import WireJSON

/// List and object properties, as Mixpanel's ingestion takes them ("Supported Properties Data
/// Type"): JSON lists and objects of at most 8 KB each, objects of at most 255 keys nested at most 3
/// levels, strings inside cut to 255 characters like top-level ones.
///
/// Under a repairing policy a list over 8 KB keeps its longest prefix that fits (`list_truncated`);
/// an object over a limit or a structure nested too deep becomes `null` (`property_left_out`); under
/// the other policies each is a violation.
extension MixpanelMapper {
  /// The JSON of a list or object property named `key`.
  func structured(
    _ value: ParameterValue, key: String, _ ledger: inout LimitLedger<MixpanelViolation>
  ) -> [UInt8] {
    let field = "properties.\(key)"
    if value.depth > MixpanelLimits.maximumNestingDepth {
      let violation = MixpanelViolation(
        field: field, message: "nests deeper than \(MixpanelLimits.maximumNestingDepth) levels")
      ledger.leaveOut(violation, as: "property_left_out")
      return Array("null".utf8)
    }
    var json = JSONWriter(capacity: 256)
    write(value, field: { field }, to: &json, &ledger)
    guard json.bytes.count > MixpanelLimits.maximumStructuredPropertyBytes else { return json.bytes }
    let violation = MixpanelViolation(
      field: field,
      message: "is \(json.bytes.count) bytes, at most \(MixpanelLimits.maximumStructuredPropertyBytes)")
    guard case .list(let elements) = value else {
      ledger.leaveOut(violation, as: "property_left_out")
      return Array("null".utf8)
    }
    // Without a repairing policy, `fix` records the violation and the event is dropped.
    return ledger.fix(violation, fittingPrefix(of: elements, field: field), as: "list_truncated") ?? Array("null".utf8)
  }

  /// The longest prefix of `elements` whose JSON list fits the limit (an empty list at worst).
  private func fittingPrefix(of elements: [ParameterValue], field: String) -> [UInt8] {
    var scratch = LimitLedger<MixpanelViolation>(policy: .repair)
    var json = JSONWriter(capacity: MixpanelLimits.maximumStructuredPropertyBytes)
    json.beginArray()
    for element in elements {
      var next = json
      write(element, field: { field }, to: &next, &scratch)
      guard next.bytes.count + 1 <= MixpanelLimits.maximumStructuredPropertyBytes else { break }
      json = next
    }
    json.endArray()
    return json.bytes
  }

  /// Writes `value`; `field` names it in a violation (built only then).
  private func write(
    _ value: ParameterValue, field: () -> String, to json: inout JSONWriter,
    _ ledger: inout LimitLedger<MixpanelViolation>
  ) {
    switch value {
    case .string(let text): json.string(cut(text, field: field(), &ledger))
    case .int(let number): json.int(number)
    case .double(let number): json.double(number)
    case .bool(let flag): json.bool(flag)
    case .date(let date): json.string(ISO8601.string(from: date))
    case .list(let elements):
      json.beginArray()
      for element in elements { write(element, field: field, to: &json, &ledger) }
      json.endArray()
    case .object(let fields):
      guard fields.count <= MixpanelLimits.maximumObjectKeys else {
        let violation = MixpanelViolation(
          field: field(), message: "an object has more than \(MixpanelLimits.maximumObjectKeys) keys")
        ledger.leaveOut(violation, as: "property_left_out")
        json.null()
        return
      }
      json.beginObject()
      for entry in fields {
        json.key(cut(entry.key, field: field(), &ledger))
        write(entry.value, field: { "\(field()).\(entry.key)" }, to: &json, &ledger)
      }
      json.endObject()
    }
  }
}
