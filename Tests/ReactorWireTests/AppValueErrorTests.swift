import MessagePack
@testable import ReactorWire
import Testing

/// Why an app value did not decode, in one line of the app's terms.
@Suite struct AppValueErrorTests {
    enum Carrier: Codable { case ground, air }
    enum Action: Codable { case place(order: String, quantity: Int), ship(order: String, carrier: Carrier), cancel(order: String) }

    func describe(_ json: String) throws -> String {
        let payload = try MessagePackValue(jsonText: json).pack()
        do {
            _ = try MessagePackDecoder().decode(Action.self, from: payload)
            return "decoded"
        } catch {
            return AppValueError.describe(error, type: Action.self)
        }
    }

    @Test func anUnknownCaseIsNamedWithTheEnumsCases() throws {
        #expect(try describe(#"{"refund":{"order":"A1"}}"#) == "'refund' is not a case of AppValueErrorTests.Action; its cases are place, ship, cancel")
    }

    @Test func anUnknownCaseInsideAnActionSaysWhere() throws {
        #expect(try describe(#"{"ship":{"order":"A1","carrier":{"drone":{}}}}"#)
            == "AppValueErrorTests.Action at ship.carrier: 'drone' is not a case of AppValueErrorTests.Carrier; its cases are ground, air")
    }

    @Test func aMissingOrWrongFieldSaysWhich() throws {
        #expect(try describe(#"{"place":{"order":"A1"}}"#) == "AppValueErrorTests.Action at place: the field 'quantity' is missing")
        #expect(try describe(#"{"place":{"order":"A1","quantity":"two"}}"#).hasPrefix("AppValueErrorTests.Action at place.quantity: "))
        #expect(try describe(#"{}"#) == "AppValueErrorTests.Action: Invalid number of keys found, expected one. (an enum case is a map with one key, the case name)")
    }
}
