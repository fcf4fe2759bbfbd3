/// How a ClickHouse report query names a device and the unit it counts in (a person, or a device
/// never identified): by their ids, to list them, or by 64-bit hashes, to count them (a hash set of
/// integers instead of strings: 1.7–1.9× faster at 10M events).
///
/// A person and a device, or two units, with the same hash would count once: at a million units the
/// chance is about 3 in 10^8, as for devices (``ClickHouseSchema/rollups``).
enum UnitKey {
  /// `device_id` and `unit_id` (`u:` and the person, or `d:` and the device).
  case ids
  /// `device` (the device id's hash, as the rollups keep it) and `unit` (the device's hash, or the
  /// hash of `u` and the person).
  case hashes

  /// The device's column.
  var device: String { columns.device }

  /// The unit's column.
  var unit: String { columns.unit }

  private var columns: (device: String, unit: String) {
    switch self {
    case .ids: ("device_id", "unit_id")
    case .hashes: ("device", "unit")
    }
  }

  /// The device's column as a query selects it: the rollups keep the hash as `device`; on the
  /// events table, it is computed from the id.
  func deviceColumn(rollup: Bool) -> String {
    self == .hashes && !rollup ? "\(ClickHouseReports.deviceHash) AS device" : device
  }

  /// The unit of a row joined with its device's person (`''` for a device never identified).
  var unitOfPerson: String {
    switch self {
    case .ids: "if(person = '', concat('d:', device_id), concat('u:', person))"
    case .hashes: "if(person = '', device, \(Self.personHash))"
    }
  }

  /// The hash of the unit a person is (`person` a column).
  static let personHash = "cityHash64('u', person)"
}
