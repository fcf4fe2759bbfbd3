import Foundation
import TestSupport
import Testing

/// Apple's privacy manifests: every client module that calls one of Apple's required-reason APIs
/// ships a `PrivacyInfo.xcprivacy` declaring exactly those API categories, and no module declares a
/// category it does not use, tracking, or a tracking domain (the library contacts none itself).
@Suite("Privacy manifests")
struct PrivacyManifestTests {
  /// Apple's required-reason API categories and the symbols that put code in them
  /// (developer.apple.com, "Describing use of required reason API").
  static let categories: [String: [String]] = [
    "NSPrivacyAccessedAPICategoryFileTimestamp": [
      "creationDate", "modificationDate", "fileModificationDate", "contentModificationDateKey", "creationDateKey",
      "getattrlist", "getattrlistbulk", "fgetattrlist", "stat", "fstat", "fstatat", "lstat", "getattrlistat",
    ],
    "NSPrivacyAccessedAPICategorySystemBootTime": ["systemUptime", "mach_absolute_time"],
    "NSPrivacyAccessedAPICategoryDiskSpace": [
      "volumeAvailableCapacityKey", "volumeAvailableCapacityForImportantUsageKey",
      "volumeAvailableCapacityForOpportunisticUsageKey", "volumeTotalCapacityKey", "systemFreeSize", "systemSize",
      "statfs", "statvfs", "fstatfs", "fstatvfs",
    ],
    "NSPrivacyAccessedAPICategoryActiveKeyboards": ["activeInputModes"],
    "NSPrivacyAccessedAPICategoryUserDefaults": ["UserDefaults"],
  ]

  /// The repository's root, from this file's place in it.
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// Every client module's folder: the ones an app links (the collector's are server code).
  static var clientModules: [URL] {
    let files = FileManager.default
    var modules: [URL] = []
    for family in ["Packages/CoreTracker", "Packages/CoreTrackerTesting", "Packages/Delivery"] {
      modules.append(root.appendingPathComponent(family))
    }
    for family in ["Packages/Services", "Packages/Products/Trendyol", "Packages/Products/DolapLite", "Packages/Wire"] {
      let folder = root.appendingPathComponent(family)
      let names = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
      modules += names.sorted().map { folder.appendingPathComponent($0) }.filter { $0.hasDirectoryPath || isFolder($0) }
    }
    return modules
  }

  static func isFolder(_ url: URL) -> Bool {
    var folder: ObjCBool = false
    return FileManager.default.fileExists(atPath: url.path, isDirectory: &folder) && folder.boolValue
  }

  /// The categories the Swift code of `module` uses (comments left out).
  static func used(in module: URL) -> Set<String> {
    var code = ""
    let enumerator = FileManager.default.enumerator(at: module, includingPropertiesForKeys: nil)
    while let file = enumerator?.nextObject() as? URL {
      guard file.pathExtension == "swift", let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
      code += text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
        .joined(separator: "\n")
    }
    return Set(
      categories.filter { _, symbols in
        symbols.contains { symbol in code.range(of: "\\b\(symbol)\\b", options: .regularExpression) != nil }
      }.keys)
  }

  /// The manifest of `module`, if it ships one.
  static func manifest(of module: URL) throws -> [String: Any]? {
    let file = module.appendingPathComponent("PrivacyInfo.xcprivacy")
    guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
    return try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
  }

  @Test func everyRequiredReasonAPIIsDeclaredAndNothingElse() throws {
    let modules = Self.clientModules
    #expect(modules.count >= 10, "client modules found under \(Self.root.path)")
    var withManifest = 0
    for module in modules {
      let used = Self.used(in: module)
      let manifest = try Self.manifest(of: module)
      if manifest != nil { withManifest += 1 }
      let entries = manifest?["NSPrivacyAccessedAPITypes"] as? [[String: Any]] ?? []
      let declared = Set(entries.compactMap { $0["NSPrivacyAccessedAPIType"] as? String })
      #expect(declared == used, "\(module.lastPathComponent): declares \(declared.sorted()), uses \(used.sorted())")
      for entry in entries {
        #expect(!((entry["NSPrivacyAccessedAPITypeReasons"] as? [String]) ?? []).isEmpty, "\(module.lastPathComponent)")
      }
      if let manifest {
        #expect(manifest["NSPrivacyTracking"] as? Bool == false, "\(module.lastPathComponent)")
        #expect((manifest["NSPrivacyTrackingDomains"] as? [String])?.isEmpty == true, "\(module.lastPathComponent)")
      }
    }
    #expect(withManifest >= 1)
  }

  /// The check can fail: a module that reads file dates is found using the file-timestamp category.
  @Test func aFileDateReadIsFound() throws {
    let folder = TestFiles.unique("privacy")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try "let keys: [URLResourceKey] = [.contentModificationDateKey]\n// UserDefaults in a comment\n".write(
      to: folder.appendingPathComponent("A.swift"), atomically: true, encoding: .utf8)
    #expect(Self.used(in: folder) == ["NSPrivacyAccessedAPICategoryFileTimestamp"])
  }
}
