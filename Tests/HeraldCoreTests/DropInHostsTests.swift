import HeraldCore
import Testing

/// Drop-in routing by host: each of FCM's host names serves the paths its clients send
/// there, the operator's own names serve everything, and any other host nothing.
@Suite struct DropInHostsTests {
    let hosts = DropInHosts(ownHostNames: ["Push.Example.org"])

    @Test func eachGoogleHostServesThePathsItsClientsUse() {
        #expect(hosts.serves(authority: "fcm.googleapis.com", path: "/v1/projects/p/messages:send"))
        #expect(hosts.serves(authority: "fcm.googleapis.com:443", path: "/fcm/send/abc?x=1"))
        #expect(hosts.serves(authority: "oauth2.googleapis.com", path: "/token"))
        #expect(hosts.serves(authority: "android.clients.google.com", path: "/c2dm/register3"))
        #expect(hosts.serves(authority: "IID.googleapis.com.", path: "/iid/v1:batchAdd"))
        #expect(hosts.serves(authority: "oauth2.googleapis.com", path: "/v1/projects/p/messages:send") == false)
        #expect(hosts.serves(authority: "android.clients.google.com", path: "/token") == false)
        #expect(hosts.serves(authority: "mtalk.google.com", path: "/healthz") == false)
        #expect(hosts.serves(authority: "fcm.googleapis.com", path: "/metrics") == false)
    }

    @Test func theOperatorsNamesServeEverythingAndOtherHostsNothing() {
        #expect(hosts.serves(authority: "push.example.org:8443", path: "/metrics"))
        #expect(hosts.serves(authority: "www.google.com", path: "/token") == false)
        #expect(hosts.serves(authority: "127.0.0.1:443", path: "/v1/projects/p/messages:send") == false)
        #expect(hosts.serves(authority: "", path: "/token") == false)
        #expect(hosts.serves(authority: "[::1]:443", path: "/token") == false)
    }

    /// N1: devices fall back to port 443, where only this name tells them from HTTPS.
    @Test func onlyTheDevicesHostNameAsksForTheGatewayOnPort443() {
        #expect(DropInHosts.isDeviceGateway("mtalk.google.com"))
        #expect(DropInHosts.isDeviceGateway("MTALK.google.com."))
        #expect(DropInHosts.isDeviceGateway("fcm.googleapis.com") == false)
        #expect(DropInHosts.isDeviceGateway("mtalk.google.com.example.org") == false)
        #expect(DropInHosts.isDeviceGateway("") == false)
    }

    /// W6: Firefox's push connection asks for Mozilla's push host; its endpoints are on the updates host.
    @Test func mozillasNamesServeItsPushProtocolAndEndpointsOnly() {
        let hosts = DropInHosts()
        #expect(DropInHosts.isMozillaPush("push.services.mozilla.com"))
        #expect(DropInHosts.isMozillaPush("updates.push.services.mozilla.com") == false)
        #expect(hosts.serves(authority: "updates.push.services.mozilla.com", path: "/wp/abc"))
        #expect(
            hosts.serves(authority: "updates.push.services.mozilla.com", path: "/v1/projects/p/messages:send") == false)
        #expect(hosts.serves(authority: "push.services.mozilla.com", path: "/wp/abc") == false)
    }
}
