import CollectorService
import DLTracker
import FirebaseService
import Foundation
import LogService
import MixpanelService
import TestSupport
import Testing

/// The ids DLService names are the ids its services answer to: a feature's per-service payload
/// reaches the service it was written for.
@Suite("DLService ids")
struct DLServiceIDTests {
  @Test func eachIdIsTheOneItsServiceAnswersTo() throws {
    let directory = TemporaryDirectory()
    let folder = directory.url
    let collector = try CollectorService(
      endpoint: URL(string: "http://127.0.0.1:9")!, writeKey: "k", directory: folder.appendingPathComponent("c"))
    let firebase = try FirebaseService(
      firebaseAppID: "1:1:ios:1", apiSecret: "s", directory: folder.appendingPathComponent("f"))
    let mixpanel = try MixpanelService(mode: .track(token: "t"), directory: folder.appendingPathComponent("m"))
    #expect(LogService().id == DLService.log)
    #expect(collector.id == DLService.collector)
    #expect(firebase.id == DLService.firebase)
    #expect(mixpanel.id == DLService.mixpanel)
    #expect(Set([DLService.log, DLService.collector, DLService.firebase, DLService.mixpanel]).count == 4)
  }
}
