import OrderFulfilment
import ReactorCore
import ReactorTesting
import Testing

/// The fulfilment reactor, exhaustively: every mutation received, every effect stubbed or run,
/// every state change stated.
@Suite struct FulfilmentTests {
    /// 5 mugs at 12.50 on the shelf.
    func stocked() -> TestStore<Fulfilment> {
        let store = TestStore(reactor: Fulfilment())
        store.send(.restock(sku: "mug", quantity: 5, priceCents: 1250)) {
            $0.stock["mug"] = StockItem(available: 5, priceCents: 1250)
        }
        return store
    }

    /// Retries without waiting: three attempts, 1 ms apart.
    let quickRetries = RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(1), timeout: nil)

    @Test func placingAnOrderHoldsItsStockAndStartsTheReservationAndThePayment() async {
        let store = stocked()
        store.send(.place(order: "A1", sku: "mug", quantity: 2, card: "tok_ok")) {
            $0.stock["mug"]?.available = 3
            $0.orders["A1"] = Order(sku: "mug", quantity: 2, amountCents: 2500, status: .placed, history: ["placed"])
        }
        #expect(store.pendingEffects == [.reserveStock(order: "A1", sku: "mug", quantity: 2), .charge(order: "A1", amountCents: 2500, card: "tok_ok")])
        await store.runEffects(with: FulfilmentEffects())
        store.receive(.stockReserved(order: "A1", pickTicket: "PICK-A1")) {
            $0.orders["A1"]?.status = .reserved
            $0.orders["A1"]?.history.append("reserved PICK-A1")
        }
        store.receive(.charged(order: "A1", paymentID: "pay-A1")) {
            $0.orders["A1"]?.status = .paid
            $0.orders["A1"]?.history.append("charged pay-A1")
        }
        store.finish()
    }

    /// The payment ends first, as it often does on workers: the lane holds its result until the
    /// reservation's is in, so an order is never paid before it is reserved.
    @Test func theOrdersLaneAppliesThePaymentAfterTheReservation() async {
        let store = stocked()
        store.send(.place(order: "A1", sku: "mug", quantity: 1, card: "tok_ok")) {
            $0.stock["mug"]?.available = 4
            $0.orders["A1"] = Order(sku: "mug", quantity: 1, amountCents: 1250, status: .placed, history: ["placed"])
        }
        await store.runEffect(.charge(order: "A1", amountCents: 1250, card: "tok_ok"), with: FulfilmentEffects())
        #expect(store.unreceivedMutations.isEmpty)
        await store.runEffect(.reserveStock(order: "A1", sku: "mug", quantity: 1), with: FulfilmentEffects())
        store.receive(.stockReserved(order: "A1", pickTicket: "PICK-A1")) {
            $0.orders["A1"]?.status = .reserved
            $0.orders["A1"]?.history.append("reserved PICK-A1")
        }
        store.receive(.charged(order: "A1", paymentID: "pay-A1")) {
            $0.orders["A1"]?.status = .paid
            $0.orders["A1"]?.history.append("charged pay-A1")
        }
    }

    /// The gateway fails the first two attempts; the third, after the standard backoff (on the
    /// test's clock, which lets no real time pass), goes through.
    @Test func anUnavailableGatewayIsRetried() async {
        let store = stocked()
        store.send(.place(order: "A1", sku: "mug", quantity: 1, card: "tok_ok")) {
            $0.stock["mug"]?.available = 4
            $0.orders["A1"] = Order(sku: "mug", quantity: 1, amountCents: 1250, status: .placed, history: ["placed"])
        }
        let clock = ImmediateClock()
        await store.runEffects(with: FulfilmentEffects(payments: PaymentGateway(unavailableAttempts: 2)), retry: .standard, clock: clock)
        #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        store.receive(.stockReserved(order: "A1", pickTicket: "PICK-A1")) {
            $0.orders["A1"]?.status = .reserved
            $0.orders["A1"]?.history.append("reserved PICK-A1")
        }
        store.receive(.charged(order: "A1", paymentID: "pay-A1")) {
            $0.orders["A1"]?.status = .paid
            $0.orders["A1"]?.history.append("charged pay-A1")
        }
    }

    /// Declined on every attempt: the failure mutation cancels the order and its mugs go back.
    @Test func aDeclinedCardCancelsTheOrderAndPutsItsStockBack() async {
        let store = stocked()
        store.send(.place(order: "A2", sku: "mug", quantity: 3, card: PaymentGateway.declinedCard)) {
            $0.stock["mug"]?.available = 2
            $0.orders["A2"] = Order(sku: "mug", quantity: 3, amountCents: 3750, status: .placed, history: ["placed"])
        }
        await store.runEffects(with: FulfilmentEffects(), retry: quickRetries)
        store.receive(.stockReserved(order: "A2", pickTicket: "PICK-A2")) {
            $0.orders["A2"]?.status = .reserved
            $0.orders["A2"]?.history.append("reserved PICK-A2")
        }
        store.receive(.paymentFailed(order: "A2", reason: "card tok_declined declined (after 3 attempts)")) {
            $0.stock["mug"]?.available = 5
            $0.orders["A2"]?.status = .cancelled
            $0.orders["A2"]?.history.append("payment failed: card tok_declined declined (after 3 attempts)")
        }
    }

    /// The reservation fails for good while the payment went through: the lane applies the
    /// cancellation first, so the payment is recorded as one to refund.
    @Test func aPaymentAfterAFailedReservationIsToBeRefunded() {
        let store = stocked()
        store.send(.place(order: "A3", sku: "mug", quantity: 1, card: "tok_ok")) {
            $0.stock["mug"]?.available = 4
            $0.orders["A3"] = Order(sku: "mug", quantity: 1, amountCents: 1250, status: .placed, history: ["placed"])
        }
        store.expectEffect(.charge(order: "A3", amountCents: 1250, card: "tok_ok"), emitting: [.charged(order: "A3", paymentID: "pay-A3")])
        store.expectEffect(.reserveStock(order: "A3", sku: "mug", quantity: 1), failure: EffectFailure(message: "warehouse closed", attempts: 3))
        store.receive(.reservationFailed(order: "A3", reason: "warehouse closed (after 3 attempts)")) {
            $0.stock["mug"]?.available = 5
            $0.orders["A3"]?.status = .cancelled
            $0.orders["A3"]?.history.append("reservation failed: warehouse closed (after 3 attempts)")
        }
        store.receive(.charged(order: "A3", paymentID: "pay-A3")) {
            $0.orders["A3"]?.history.append("charged pay-A3, to refund")
        }
    }

    @Test func anOrderShipsOnlyOncePaid() async {
        let store = stocked()
        store.send(.ship(order: "A1", address: "1 High St")) { $0.refusals = ["ship A1: no such order"] }
        store.send(.place(order: "A1", sku: "mug", quantity: 1, card: "tok_ok")) {
            $0.stock["mug"]?.available = 4
            $0.orders["A1"] = Order(sku: "mug", quantity: 1, amountCents: 1250, status: .placed, history: ["placed"])
        }
        store.send(.ship(order: "A1", address: "1 High St")) { $0.refusals.append("ship A1: it is placed, not paid") }
        await store.runEffects(with: FulfilmentEffects())
        store.receive(.stockReserved(order: "A1", pickTicket: "PICK-A1")) {
            $0.orders["A1"]?.status = .reserved
            $0.orders["A1"]?.history.append("reserved PICK-A1")
        }
        store.receive(.charged(order: "A1", paymentID: "pay-A1")) {
            $0.orders["A1"]?.status = .paid
            $0.orders["A1"]?.history.append("charged pay-A1")
        }
        store.send(.ship(order: "A1", address: "")) {
            $0.orders["A1"]?.status = .shipping
            $0.orders["A1"]?.history.append("dispatched")
        }
        await store.runEffects(with: FulfilmentEffects())
        // Refused by the carrier: paid again, to be shipped with an address.
        store.receive(.shipmentFailed(order: "A1", reason: "no address (after 1 attempt)")) {
            $0.orders["A1"]?.status = .paid
            $0.orders["A1"]?.history.append("shipment failed: no address (after 1 attempt)")
        }
        store.send(.ship(order: "A1", address: "1 High St")) {
            $0.orders["A1"]?.status = .shipping
            $0.orders["A1"]?.history.append("dispatched")
        }
        await store.runEffects(with: FulfilmentEffects())
        store.receive(.shipped(order: "A1", tracking: "TRACK-A1")) {
            $0.orders["A1"]?.status = .shipped
            $0.orders["A1"]?.history.append("shipped TRACK-A1")
        }
    }

    @Test func ordersThatCannotBeServedAreRefusedWithoutAnEffect() {
        let store = stocked()
        store.send(.place(order: "B1", sku: "teapot", quantity: 1, card: "tok_ok")) { $0.refusals = ["place B1: no product teapot"] }
        store.send(.place(order: "B2", sku: "mug", quantity: 6, card: "tok_ok")) { $0.refusals.append("place B2: 6 mug wanted, 5 available") }
        store.send(.restock(sku: "mug", quantity: 0, priceCents: 1250)) { $0.refusals.append("restock mug: 0 at 1250 cents") }
        store.send(.place(order: "B3", sku: "mug", quantity: 5, card: "tok_ok")) {
            $0.stock["mug"]?.available = 0
            $0.orders["B3"] = Order(sku: "mug", quantity: 5, amountCents: 6250, status: .placed, history: ["placed"])
        }
        store.send(.place(order: "B3", sku: "mug", quantity: 1, card: "tok_ok")) { $0.refusals.append("place B3: the order exists") }
        #expect(store.pendingEffects.count == 2)
        store.skipPendingEffects()
    }
}
