import CollectorService
import FirebaseService
import Foundation
import LogService
import MixpanelService
import ServiceSupport
import TYTracker
import TestSupport
import Testing

/// The well-known ids (``ServiceID``, which `TYService` and `DLService` re-publish for their
/// features) are the ids the services answer to: a feature's per-service payload reaches the
/// service it was written for, in both products.
@Suite("Service ids")
struct ServiceIDTests {
  @Test func eachIdIsTheOneItsServiceAnswersTo() throws {
    let directory = TemporaryDirectory()
    let folder = directory.url
    let collector = try CollectorService(
      endpoint: URL(string: "http://127.0.0.1:9")!, writeKey: "k", directory: folder.appendingPathComponent("c"))
    let firebase = try FirebaseService(
      firebaseAppID: "1:1:ios:1", apiSecret: "s", directory: folder.appendingPathComponent("f"))
    let mixpanel = try MixpanelService(mode: .track(token: "t"), directory: folder.appendingPathComponent("m"))
    #expect(LogService().id == ServiceID.log)
    #expect(collector.id == ServiceID.collector)
    #expect(firebase.id == ServiceID.firebase)
    #expect(mixpanel.id == ServiceID.mixpanel)
    #expect(Set([ServiceID.log, ServiceID.collector, ServiceID.firebase, ServiceID.mixpanel]).count == 4)
  }
}
